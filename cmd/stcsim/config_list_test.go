package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stcsim/stcsim/configs"
)

// TestConfigListAligned: every description starts in the same column,
// whatever the length of the built-in names (a100-pcie-40gb once pushed
// its own out of line).
func TestConfigListAligned(t *testing.T) {
	out, code := captureStdout(t, func() int { return runConfig([]string{"list"}) })
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(configs.Builtin()) {
		t.Fatalf("%d lines for %d configs:\n%s", len(lines), len(configs.Builtin()), out)
	}
	col := -1
	for i, l := range lines {
		name := configs.Builtin()[i]
		if !strings.HasPrefix(l, name+" ") {
			t.Fatalf("line %q does not start with %q", l, name)
		}
		rest := strings.TrimLeft(l[len(name):], " ")
		at := utf8.RuneCountInString(l) - utf8.RuneCountInString(rest)
		if col >= 0 && at != col {
			t.Errorf("description of %s starts at column %d, others at %d:\n%s", name, at, col, out)
		}
		col = at
	}
}
