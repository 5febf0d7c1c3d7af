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

// An error of one key against another's value names where the other was
// set when that is another source: the --set that caused it, not only
// the built-in line of the key that now fails.
func TestCrossKeyErrorsNameTheOtherKeysSource(t *testing.T) {
	dir := t.TempDir()
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte("base: a100-40gb\nl2:\n  near_latency: 500\n  far_latency: 400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		files, sets []string
		want, not   string
	}{
		{nil, []string{"l2.far_latency=800"}, "key dram.latency: must be >= l2.far_latency (800): " +
			"a DRAM access passes through L2 (l2.far_latency from --set l2.far_latency=800)", ""},
		{nil, []string{"l2.partitions=3"}, "key l2.size_kb: 40960 KB does not divide into 120 slices " +
			"(l2.partitions from --set l2.partitions=3)", "slices_per_partition from"},
		{nil, []string{"l1.total_kb=100"}, "key shared_memory.carveout_options_kb: option 164 KB " +
			"exceeds l1.total_kb (100) (l1.total_kb from --set l1.total_kb=100)", ""},
		// A section's check (sm), its other key named with the section.
		{nil, []string{"sm.max_warps=32"}, "key sm.max_threads: inconsistent: max_warps 32 x 32 = 1024 " +
			"(sm.max_warps from --set sm.max_warps=32)", ""},
		// A key outside the section (a tile against sm.max_threads).
		{nil, []string{"sm.max_warps=4", "sm.max_threads=128"}, "warps exceed sm.max_threads " +
			"(sm.max_threads from --set sm.max_threads=128)", ""},
		// Both keys in one file: nothing added.
		{[]string{both}, nil, "both.yaml:4: key l2.far_latency: must be >= l2.near_latency (500)", "from"},
	} {
		_, err := Load(c.files, c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) ||
			(c.not != "" && strings.Contains(err.Error(), c.not)) {
			t.Errorf("%v %v: %v\nwant %q", c.files, c.sets, err, c.want)
		}
	}
}
