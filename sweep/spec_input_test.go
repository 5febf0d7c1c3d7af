package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/testfiles"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep/internal/sweeptest"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/workloads"
)

// A device, a FIFO or a directory given as the sweep file, or as a
// sweep's trace, is refused before it is read, quickly.
func TestSweepFilesMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := testfiles.FIFO(t, dir, "fifo.yaml")
	zero := testfiles.DevZero(t, dir, "zero.csv")
	spec := filepath.Join(dir, "s.yaml")
	os.WriteFile(spec, []byte("workloads: [{trace: zero.csv}]\n"), 0o644)
	within := func(f func() error) error { return testfiles.Within(t, "the sweep's load", f) }
	for _, p := range []string{"/dev/zero", fifo, dir} {
		err := within(func() error { _, err := Load(p); return err })
		if want := "sweep " + p + ": not a regular file"; err == nil || err.Error() != want {
			t.Errorf("Load(%s): %v, want %q", p, err, want)
		}
	}
	err := within(func() error {
		s, err := Load(spec)
		if err == nil {
			_, err = s.Plan(Resolver{Trace: workloads.Load})
		}
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "line 1: workloads[0]: trace "+zero+": not a regular file") {
		t.Errorf("trace: zero.csv: %v", err)
	}
}

// A sweep's errors name the file and line in the project's words, and a
// workload's batch and seq follow the integer rules of config values.
func TestSweepSpecMessages(t *testing.T) {
	for _, c := range []struct{ name, spec, want string }{
		{"empty", "", "sweep s.yaml: empty file"},
		{"comments only", "# nothing\n", "sweep s.yaml: empty file"},
		{"unknown key", "workloads: [{gemms: [64x64x64]}]\nbogus: 1\n",
			`sweep s.yaml: line 2: unknown key "bogus" (allowed here: configs, grid, modes, name, set, workloads, zip)`},
		{"duplicate key", "workloads: [{gemms: [64x64x64]}]\nname: a\nname: b\n",
			"sweep s.yaml:3: key name repeated (first at line 2)"},
		{"duplicate workload key", "workloads:\n  - gemms: [64x64x64]\n    gemms: [32x32x32]\n",
			"sweep s.yaml:3: key workloads[0].gemms repeated (first at line 2)"},
		{"two documents", "workloads: [{gemms: [64x64x64]}]\n---\nname: x\n",
			"sweep s.yaml:3: a second YAML document"},
		{"not a mapping", "- a\n", "sweep s.yaml:1: not a YAML mapping"},
		{"binary", "workloads: \x00\n", "sweep s.yaml: not a YAML file"},
		{"configs a mapping", "workloads: [{gemms: [64x64x64]}]\nconfigs: {a: 1}\n",
			"sweep s.yaml: line 2: configs: wrong type: want a list, got a mapping"},
		{"gemms a string", "workloads: [{gemms: 64x64x64}]\n",
			`sweep s.yaml: line 1: gemms: wrong type: want a list, got "64x64x64"`},
		{"fractional batch", "workloads: [{model: bert-base, batch: 1.9, seq: 16}]\n",
			`sweep s.yaml: line 1: batch: want a whole number in decimal digits (no fraction, exponent or leading zero), got "1.9"`},
		{"exponent batch", "workloads: [{model: bert-base, batch: 1e1, seq: 16}]\n",
			`line 1: batch: want a whole number in decimal digits`},
		{"octal seq", "workloads: [{model: bert-base, seq: 054}]\n", `seq: want a whole number in decimal digits`},
		{"zero seq", "workloads:\n  - model: bert-base\n    batch: 1\n    seq: 0\n",
			"sweep s.yaml: line 4: seq: must be in [1, 1073741824], got 0"},
		{"negative batch", "workloads: [{model: bert-base, batch: -1}]\n", "batch: must be in [1, 1073741824], got -1"},
		{"huge batch", "workloads: [{model: bert-base, batch: 99999999999999999999}]\n", "batch: want a whole number"},
		{"list batch", "workloads: [{model: bert-base, batch: [1]}]\n", "line 1: batch: want a whole number, got a list"},
	} {
		_, err := Parse([]byte(c.spec), "s.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), ": yaml:") ||
			strings.Contains(err.Error(), "EOF") ||
			strings.Contains(err.Error(), "sweep.Spec")) {
			t.Errorf("%s: %v: the YAML library's own words", c.name, err)
		}
	}
	s, err := Parse([]byte("workloads: [{model: bert-base, batch: 2, seq: 16}, {model: resnet50}]\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Workloads; w[0].Batch != 2 || w[0].Seq != 16 || w[1].Batch != 0 {
		t.Errorf("workloads %+v: want batch 2 seq 16, then the defaults", w)
	}
}

// CheckStore finds, read-only and before anything runs, a store that is
// not one or that holds the sweep's points with other GEMMs or modes;
// a store of the same sweep passes (it resumes).
func TestCheckStoreBeforeRun(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	p := mustPlan(t, "workloads: [{name: tiny, gemms: [256x256x256]}]\n")
	runAll(t, p, db, Options{})
	before, _ := os.ReadFile(db)
	if err := store.CheckStore(db, IDs(p.Units()), p.Modes); err != nil {
		t.Errorf("the same sweep again: %v", err)
	}
	if err := store.CheckStore(filepath.Join(dir, "new.db"), IDs(p.Units()), p.Modes); err != nil {
		t.Errorf("a new store: %v", err)
	}
	for spec, want := range map[string]string{
		"workloads: [{name: tiny, gemms: [128x128x128]}]\n":                 "with different GEMMs",
		"workloads: [{name: tiny, gemms: [256x256x256]}]\nmodes: [dense]\n": "in modes dense,sparse, this sweep asks for dense",
	} {
		q := mustPlan(t, spec)
		err := store.CheckStore(db, IDs(q.Units()), q.Modes)
		var in *store.InputError
		if !errors.As(err, &in) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an InputError %q", spec, err, want)
		}
		if after, _ := os.ReadFile(db); string(after) != string(before) {
			t.Error("CheckStore wrote to the store")
		}
		// The run finds it too, before simulating anything, as bad input.
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		_, err = Run(t.Context(), q, st, Options{Run: func(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
			ran++
			return sweeptest.FakeRun(ld, job)
		}})
		st.Close()
		if !errors.As(err, &in) || ran != 0 {
			t.Errorf("%q: Run: %v after %d simulations, want an InputError before any", spec, err, ran)
		}
	}
	rnd := filepath.Join(dir, "rand.db")
	os.WriteFile(rnd, []byte("\x93\x11 random bytes, not SQLite at all \xff\xfe"), 0o644)
	text := filepath.Join(dir, "afile")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	for _, bad := range []string{rnd, text, dir} {
		if err := store.CheckStore(bad, IDs(p.Units()), p.Modes); !errors.Is(err, store.ErrNotStore) {
			t.Errorf("CheckStore(%s): %v, want ErrNotStore", bad, err)
		}
	}
}

// A set: override of a key the grid or a zip varies is refused: every
// point would override it.
func TestSetOfAVariedKeyIsRefused(t *testing.T) {
	for _, text := range []string{
		"set: [dram.bandwidth_gbps=100]\ngrid:\n  dram.bandwidth_gbps: [1555, 2039]\nworkloads: [{model: bert-base}]\n",
		"set: [\"gpu.sm_count = 8\"]\nzip:\n  - {gpu.sm_count: [4, 8], gpu.clock_mhz: [1000, 1410]}\nworkloads: [{model: bert-base}]\n",
	} {
		_, err := Parse([]byte(text), "s.yaml")
		if err == nil || !strings.Contains(err.Error(), "is also varied") {
			t.Errorf("%q: %v", text, err)
		}
	}
}
