package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Type errors say what was found: an alias by its name (not an empty
// string), and an unsigned key asks for a non-negative integer.
func TestTypeErrorsSayWhatWasFound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "alias.yaml")
	if err := os.WriteFile(p, []byte("base: a100-40gb\ngpu: &g {clock_mhz: 1410}\nsm: *g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{p}, nil)
	if err == nil || !strings.Contains(err.Error(), "alias.yaml:3: key sm: wrong type: want a mapping, got an alias (*g)") {
		t.Errorf("alias: %v", err)
	}
	_, err = Load(nil, []string{"sim.seed=-1"})
	if err == nil || !strings.Contains(err.Error(), "want a non-negative integer") {
		t.Errorf("sim.seed=-1: %v", err)
	}
}

// A config's name and description reach terminals as they are: a
// control character in either (an ESC) is refused with the key.
func TestNamesArePrintable(t *testing.T) {
	for _, set := range []string{"name=evil\x1b[2J", "description=bell\x07"} {
		_, err := Load(nil, []string{set})
		if err == nil || !strings.Contains(err.Error(), "control character") ||
			strings.ContainsAny(err.Error(), "\x1b\x07") {
			t.Errorf("%q: %v (want it refused, and no raw control character in the message)", set, err)
		}
	}
	for _, name := range Builtin() {
		if _, err := Load([]string{name}, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
