package report

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
)

// renamed is a report of sampleReport's results under other workload
// names, so that a second run writes plots of other names.
func renamed(rep *results.Report, names map[string]string) *results.Report {
	out := *rep
	out.Results = slices.Clone(rep.Results)
	out.Totals = slices.Clone(rep.Totals)
	for i := range out.Results {
		out.Results[i].Workload = names[out.Results[i].Workload]
	}
	for i := range out.Totals {
		out.Totals[i].Workload = names[out.Totals[i].Workload]
	}
	return &out
}

// snapshot is every entry of dir with its contents ("<dir>" for a
// directory).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			out[e.Name()] = "<dir>"
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for n, w := range want {
		if g, ok := got[n]; !ok {
			t.Errorf("%s: %s is gone", what, n)
		} else if g != w {
			t.Errorf("%s: %s changed", what, n)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: %s appeared", what, n)
		}
	}
}

// onlyDirBeside fails when anything but dir is left in its parent (a
// temporary or set-aside directory).
func onlyDirBeside(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 || entries[0].Name() != filepath.Base(dir) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside %s: %v, want only it", dir, names)
	}
}

// A run into a directory removes exactly the files the earlier run there
// wrote, as its manifest lists them (the energy plots included), and
// leaves the user's files alone, even those whose names look like plots.
func TestRunDirReplacesExactlyTheEarlierRunsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first := sampleReport(2)
	if err := WriteRun(dir, first, loadDefault(t)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"resnet50-energy-breakdown.png", "resnet50-energy-layers.svg",
		"resnet50-roofline.png", ManifestName} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("first run: %v", err)
		}
	}
	mine := map[string]string{"mydata-roofline.png": "mine 1", "notes-speedup.svg": "mine 2",
		".notes.tmp": "mine 3", "notes.txt": "mine 4"}
	for n, body := range mine {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, ".results.csv.tmp123"), nil, 0o644) // a killed WriteAtomic's
	second := renamed(first, map[string]string{"resnet50": "gemm", "bert/large": "net"})
	if err := WriteRun(dir, second, loadDefault(t)); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, dir)
	for n, body := range mine {
		if got[n] != body {
			t.Errorf("the user's %s was removed or changed", n)
		}
	}
	listed, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for n := range got {
		_, isMine := mine[n]
		switch {
		case strings.HasPrefix(n, "resnet50-") || strings.HasPrefix(n, "bert_large-") ||
			n == ".results.csv.tmp123":
			t.Errorf("the earlier run's %s survived", n)
		case !isMine && n != ManifestName && !listed[n]:
			t.Errorf("%s is not in the manifest", n)
		}
	}
	for n := range listed {
		if _, ok := got[n]; !ok {
			t.Errorf("the manifest lists %s, which is not there", n)
		}
	}
	if !listed["gemm-energy-layers.png"] || !listed["results.csv"] {
		t.Errorf("manifest %v lacks the new run's files", listed)
	}
	onlyDirBeside(t, dir)
}

// A file in the way that no manifest lists, or a directory where a
// result goes, is refused before anything is touched, by CheckRunDir (the
// check before simulating) and by WriteRun itself.
func TestRunDirRefusesWhatItDidNotWrite(t *testing.T) {
	rep := sampleReport(1)
	files := RunFiles([]string{"resnet50", "bert/large"})
	for _, c := range []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"user's results.csv, no manifest", func(dir string) {
			os.WriteFile(filepath.Join(dir, "results.csv"), []byte("my data"), 0o644)
		}, "no stcsim manifest"},
		{"user's plot-named file, no manifest", func(dir string) {
			os.WriteFile(filepath.Join(dir, "resnet50-energy-layers.svg"), []byte("mine"), 0o644)
		}, "resnet50-energy-layers.svg exists"},
		{"unlisted file beside a manifest", func(dir string) {
			if err := WriteRun(dir, renamed(rep, map[string]string{"resnet50": "a", "bert/large": "b"}),
				loadDefault(t)); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "resnet50-speedup.png"), []byte("mine"), 0o644)
		}, "not one of the files the earlier run listed"},
		{"directory at results.csv", func(dir string) {
			if err := WriteRun(dir, rep, loadDefault(t)); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, "results.csv"))
			os.Mkdir(filepath.Join(dir, "results.csv"), 0o755)
		}, "results.csv is a directory"},
		{"link at report.md", func(dir string) {
			if err := WriteRun(dir, rep, loadDefault(t)); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, "report.md"))
			os.Symlink("/etc/hostname", filepath.Join(dir, "report.md"))
		}, "report.md is not a regular file"},
		{"damaged manifest", func(dir string) {
			os.WriteFile(filepath.Join(dir, ManifestName), []byte("../escape\n"), 0o644)
		}, "manifest is damaged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			os.Mkdir(dir, 0o755)
			c.setup(dir)
			before := snapshot(t, dir)
			if _, err := CheckRunDir(dir, files); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckRunDir: %v, want %q", err, c.want)
			}
			err := WriteRun(dir, rep, loadDefault(t))
			if err == nil || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), dir) {
				t.Errorf("WriteRun: %v, want %q naming %s", err, c.want, dir)
			}
			sameSnapshot(t, "after the refusal", snapshot(t, dir), before)
			onlyDirBeside(t, dir)
		})
	}
}

// A failure while the files are swapped puts the earlier run back: the
// directory is either the new run's or left as it was.
func TestRunDirRollsBackAFailedReplacement(t *testing.T) {
	for _, failOn := range []string{"results.csv", ManifestName, "report.md"} {
		t.Run(failOn, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if err := WriteRun(dir, sampleReport(1), loadDefault(t)); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
			before := snapshot(t, dir)
			defer func(r func(string, string) error) { rename = r }(rename)
			rename = func(from, to string) error {
				if filepath.Base(to) == failOn && filepath.Dir(to) == dir &&
					strings.Contains(from, ".tmp-") && !strings.Contains(from, "-old-") {
					return errors.New("injected failure")
				}
				return os.Rename(from, to)
			}
			second := renamed(sampleReport(1), map[string]string{"resnet50": "gemm", "bert/large": "net"})
			if err := WriteRun(dir, second, loadDefault(t)); err == nil ||
				!strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("WriteRun: %v, want the injected failure", err)
			}
			sameSnapshot(t, "after the rollback", snapshot(t, dir), before)
			onlyDirBeside(t, dir)
		})
	}
}

// RunFiles, which the check before simulating uses, covers every file
// WriteRun writes.
func TestRunFilesCoverWriteRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rep := sampleReport(2)
	if err := WriteRun(dir, rep, loadDefault(t)); err != nil {
		t.Fatal(err)
	}
	files := RunFiles(workloadsOf(rep))
	for n := range snapshot(t, dir) {
		if n != ManifestName && !slices.Contains(files, n) {
			t.Errorf("WriteRun wrote %s, which RunFiles does not name", n)
		}
	}
}

// CheckRunDir returns the existing files a run would replace or remove,
// so that the caller can refuse one that is an input.
func TestCheckRunDirNamesTheFilesItWouldTouch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteRun(dir, sampleReport(1), loadDefault(t)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	touched, err := CheckRunDir(dir, RunFiles([]string{"gemm"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"results.csv", "config.yaml", "resnet50-roofline.png", ManifestName} {
		if !slices.Contains(touched, filepath.Join(dir, want)) {
			t.Errorf("touched %v lacks %s", touched, want)
		}
	}
	if slices.Contains(touched, filepath.Join(dir, "notes.txt")) {
		t.Error("touched names the user's notes.txt")
	}
	if touched, err := CheckRunDir(filepath.Join(dir, "new"), RunFiles([]string{"gemm"})); err != nil || touched != nil {
		t.Errorf("a new directory: %v %v", touched, err)
	}
}
