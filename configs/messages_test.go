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

// A switch takes true or false, in a file as in --set: not YAML 1.1's
// yes, no, on or off, which the decoder would also read.
func TestSwitchesTakeTrueOrFalse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "yes.yaml")
	if err := os.WriteFile(p, []byte("base: a100-40gb\nsim:\n  extrapolate_waves: yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{p}, nil); err == nil || !strings.Contains(err.Error(), `yes.yaml:3: key sim.extrapolate_waves: want true or false, got "yes"`) {
		t.Errorf("file: %v", err)
	}
	if _, err := Load(nil, []string{"sim.extrapolate_waves=off"}); err == nil || !strings.Contains(err.Error(), "want true or false") {
		t.Errorf("--set: %v", err)
	}
	if _, err := Load(nil, []string{"sim.extrapolate_waves=False"}); err != nil {
		t.Errorf("False: %v", err)
	}
}

// A split-K factor listed twice is refused (it would change the config's
// hash and nothing else).
func TestSplitKFactorsAreDistinct(t *testing.T) {
	if _, err := Load(nil, []string{"kernel.split_k=[1,2,1]"}); err == nil ||
		!strings.Contains(err.Error(), "factor 1 listed twice (entries 0 and 2)") {
		t.Errorf("%v", err)
	}
}
