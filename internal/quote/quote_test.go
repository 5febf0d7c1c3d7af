package quote

import (
	"strings"
	"testing"
)

func TestQBoundsWhatItQuotes(t *testing.T) {
	if got := Q("abc"); got != `"abc"` {
		t.Errorf("short: %s", got)
	}
	long := strings.Repeat("é", 1<<19) // 1 MB of two-byte runes
	got := Q(long)
	if len(got) > Max+30 || !strings.Contains(got, "(1048576 bytes)") {
		t.Errorf("1 MB value quoted as %d bytes: %.80s", len(got), got)
	}
	if strings.Contains(got, `\x`) {
		t.Errorf("cut inside a rune: %s", got)
	}
}

func TestTextEscapesControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"resnet50": "resnet50", "bert/large@seq=128": "bert/large@seq=128", "é": "é",
		"a\x1b[2Jb": `a\x1b[2Jb`, "x\x1b]0;t\ay": `x\x1b]0;t\ay`, "tab\there": `tab\there`,
		"bad\xffutf8": `bad\xffutf8`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
