package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSweepCommandsRejectBadInput checks the usage errors of the sweep,
// merge, results and plot commands; none of them simulates anything.
func TestSweepCommandsRejectBadInput(t *testing.T) {
	dir := t.TempDir()
	badKey := writeFile(t, dir, "bad.yaml", "workloads: [{gemms: [64x64x64]}]\n"+
		"grid: {l2.size_kbb: [1, 2]}\n")
	good := writeFile(t, dir, "good.yaml", "workloads: [{gemms: [64x64x64]}]\n")
	notDB := writeFile(t, dir, "not.db", "hello")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no spec", []string{"sweep"}, exitUsage},
		{"two specs", []string{"sweep", good, good}, exitUsage},
		{"bad key", []string{"sweep", badKey, "--db", filepath.Join(dir, "x.db")}, exitUsage},
		{"missing spec", []string{"sweep", filepath.Join(dir, "none.yaml")}, exitUsage},
		{"bad shard", []string{"sweep", good, "--shard", "3/2"}, exitUsage},
		{"bad jobs", []string{"sweep", "--jobs", "0", good}, exitUsage},
		{"merge one arg", []string{"merge", filepath.Join(dir, "o.db")}, exitUsage},
		{"merge missing input", []string{"merge", filepath.Join(dir, "o.db"),
			filepath.Join(dir, "missing.db")}, exitUsage},
		{"merge into input", []string{"merge", notDB, notDB}, exitUsage},
		{"merge not a store", []string{"merge", filepath.Join(dir, "o2.db"), notDB}, exitUsage},
		{"results no verb", []string{"results"}, exitUsage},
		{"results bad format", []string{"results", "export", notDB, "--format", "xml"}, exitUsage},
		{"results missing db", []string{"results", "export", filepath.Join(dir, "none.db")}, exitUsage},
		{"plot no x", []string{"plot", notDB}, exitUsage},
		{"plot not a store", []string{"plot", notDB, "--x", "gpu.sm_count"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := dispatch(tc.args); got != tc.want {
				t.Errorf("%v: exit %d, want %d", tc.args, got, tc.want)
			}
		})
	}
	for _, db := range []string{"x.db", "o2.db"} {
		if _, err := os.Stat(filepath.Join(dir, db)); err == nil {
			t.Errorf("%s was created by a command that failed on its input", db)
		}
	}
}

// TestSweepMergeExportPlot runs the commands end to end on a tiny sweep
// through the real simulator: two shards, merge, export, plot.
func TestSweepMergeExportPlot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	dir := t.TempDir()
	spec := writeFile(t, dir, "tiny.yaml", "workloads: [{name: tiny, gemms: [256x256x256]}]\n"+
		"set: [kernel.simulated_candidates=1]\n"+
		"grid: {gpu.sm_count: [54, 108]}\n")
	db := func(n string) string { return filepath.Join(dir, n) }
	steps := [][]string{
		{"sweep", spec, "--shard", "1/2", "--db", db("s1.db"), "--quiet", "--jobs", "1"},
		{"sweep", spec, "--shard", "2/2", "--db", db("s2.db"), "--quiet", "--jobs", "1"},
		{"sweep", spec, "--db", db("all.db"), "--quiet"},
		{"merge", db("m.db"), db("s1.db"), db("s2.db")},
		{"results", "export", db("m.db"), "--out", db("m.csv")},
		{"results", "export", db("all.db"), "--out", db("all.csv")},
		{"results", "export", db("all.db"), "--format", "json", "--out", db("all.json")},
		{"plot", db("m.db"), "--x", "gpu.sm_count", "--y", "tflops", "--by", "layer",
			"--out", db("p.svg")},
		{"plot", db("m.db"), "--x", "gpu.sm_count", "--out", db("s.svg"), "--size", "6x4"},
	}
	for _, args := range steps {
		if code := dispatch(args); code != exitOK {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	m, err := os.ReadFile(db("m.csv"))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := os.ReadFile(db("all.csv"))
	if string(m) != string(all) {
		t.Errorf("merged shards differ from the unsharded sweep:\n%s\nvs\n%s", m, all)
	}
	if n := strings.Count(string(all), "\n"); n != 5 {
		t.Errorf("%d CSV lines, want header + 2 points x 2 modes", n)
	}
	for _, f := range []string{"all.json", "p.svg", "p.svg.json"} {
		if st, err := os.Stat(db(f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	// The speedup plot says what stands behind it: the 1x line, the
	// base config's point (108 SMs), the override every point shares
	// (a fidelity setting) in its caption and sidecar, words for the key.
	svg, _ := os.ReadFile(db("s.svg"))
	words := " " + svgWords(svg) + " "
	for _, want := range []string{" 1x: no gain ", " a100-40gb default (108) ",
		"set on every point: kernel.simulated_candidates=1", " GPU SM count (SMs) "} {
		if !strings.Contains(words, want) {
			t.Errorf("speedup plot lacks %q", want)
		}
	}
	side, _ := os.ReadFile(db("s.svg.json"))
	for _, want := range []string{`"base_config": "a100-40gb"`, `"kernel.simulated_candidates": "1"`, `"store_sha256"`} {
		if !strings.Contains(string(side), want) {
			t.Errorf("sidecar lacks %s:\n%s", want, side)
		}
	}
}

func TestPlotOptionsChecked(t *testing.T) {
	for _, tc := range []struct {
		format, out string
		ok          bool
	}{{"", "", true}, {"pdf", "", true}, {"", "a.svg", true}, {"png", "a.png", true},
		{"jpg", "", false}, {"", "a.jpg", false}, {"svg", "a.png", false}} {
		if _, err := plotFormat(tc.format, tc.out); (err == nil) != tc.ok {
			t.Errorf("plotFormat(%q, %q): %v", tc.format, tc.out, err)
		}
	}
	for s, ok := range map[string]bool{"8x5.5": true, "3x2": true, "0x5": false, "8": false, "8x100": false, "axb": false} {
		if _, _, err := parseSize(s); (err == nil) != ok {
			t.Errorf("parseSize(%q): %v", s, err)
		}
	}
}

// sweep --dry-run estimates each point's time from its size and the
// sweep's total, and more work is never estimated faster.
func TestSweepDryRunEstimatesTime(t *testing.T) {
	dir := t.TempDir()
	small := writeFile(t, dir, "s.yaml", "workloads: [{gemms: [256x256x256]}]\n"+
		"grid: {l2.size_kb: [20480, 40960]}\n")
	big := writeFile(t, dir, "b.yaml", "workloads: [{gemms: [4096x4096x4096]}]\n"+
		"grid: {l2.size_kb: [20480, 40960]}\n")
	total := func(spec string) string {
		out, errOut, code := capture(t, func() int {
			return dispatch([]string{"sweep", spec, "--dry-run", "--jobs", "1"})
		})
		if code != exitOK || !strings.Contains(out, "estimated time: ~") ||
			strings.Count(out, "  ~") != 2 {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		return out[strings.Index(out, "estimated time: ~")+len("estimated time: ~"):]
	}
	s, b := total(small), total(big)
	ds, _ := time.ParseDuration(strings.Fields(s)[0])
	db, _ := time.ParseDuration(strings.Fields(b)[0])
	if !(db > ds) {
		t.Errorf("4096^3 sweep estimated %v, 256^3 sweep %v", db, ds)
	}
}
