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
