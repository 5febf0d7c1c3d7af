package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// killed is the panic value that stands for a kill -9 in the tests.
type killed struct{}

// TestRunDirSurvivesAKillAtEveryStep: a run killed right after any step
// of the replacement leaves a directory that the next run into it takes
// (never one it refuses: a kill just after the earlier manifest was
// moved aside once left the earlier files unlisted), and results.csv, if
// present, is one run's whole file.
func TestRunDirSurvivesAKillAtEveryStep(t *testing.T) {
	// Two runs of small files, the second with other plots.
	run := func(tag string, plots ...string) func(tmp string) error {
		return func(tmp string) error {
			for _, n := range append([]string{"config.yaml", "report.md", "results.json", "results.csv"}, plots...) {
				if err := WriteAtomic(filepath.Join(tmp, n), []byte(tag+" "+n)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	first, second := run("first", "a.png", "b.png"), run("second", "b.png", "c.png")
	for step := 1; ; step++ {
		dir := filepath.Join(t.TempDir(), "out")
		if err := writeDir(dir, first); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		calls := 0
		func() {
			defer func(r func(string, string) error) { rename = r }(rename)
			rename = func(from, to string) error {
				if err := os.Rename(from, to); err != nil {
					return err
				}
				if calls++; calls == step {
					panic(killed{})
				}
				return nil
			}
			defer func() {
				if r := recover(); r != nil && r != (killed{}) {
					panic(r)
				}
			}()
			if err := writeDir(dir, second); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}()
		if calls < step {
			if step < 3 {
				t.Fatalf("the replacement made only %d renames", calls)
			}
			return // every step was killed once
		}
		if b, err := os.ReadFile(filepath.Join(dir, "results.csv")); err == nil &&
			string(b) != "first results.csv" && string(b) != "second results.csv" {
			t.Errorf("step %d: results.csv is neither run's", step)
		}
		if err := writeDir(dir, first); err != nil {
			t.Errorf("killed after rename %d, the next run is refused: %v", step, err)
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "results.csv")); string(b) != "first results.csv" {
			t.Errorf("step %d: the next run's results.csv is not its own", step)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
			t.Errorf("step %d: the user's notes.txt changed", step)
		}
		for n := range snapshot(t, dir) {
			if strings.Contains(n, ".tmp") {
				t.Errorf("step %d: %s left in the directory", step, n)
			}
		}
	}
}
