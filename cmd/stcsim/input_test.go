package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to run exits 2 with a message, before anything is simulated
// (issue 13 items 1-3, 6, 7, 11, 19).
func TestRunRefusesBadInputUpFront(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, nil, 0o644)
	trace := filepath.Join(dir, "net.csv")
	os.WriteFile(trace, []byte("name,m,n,k,precision,sparsity,count,batch,weights\n"+
		"a,16,16,16,fp16,2:4,1,1,missing.npy\n"), 0o644)
	zero := filepath.Join(dir, "zero.csv")
	os.WriteFile(zero, []byte("name,m,n,k,precision,sparsity,count,batch,weights\n"+
		"a,16,16,16,fp16,2:4,1,1,/dev/zero\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "gpu.sm_count.x=1"}, "no keys below it"},
		{[]string{"--set", "description=caf\xe9"}, "not UTF-8"},
		{[]string{"--trace-db", "/nonexistent/dir/t.sqlite3"}, "--trace-db"},
		{[]string{"--gemm", "1073741824x1073741824x1073741824"}, "above the limit"},
		// K extrapolation and the fast-forward bound a deep GEMM's work;
		// simulated in full it is refused before anything runs.
		{[]string{"--gemm", "256x256x1073741824", "--set", "sim.extrapolate_ksteps=false",
			"--set", "sim.fast_forward=false"}, "--max-work"},
		{[]string{"--set", "dram.bandwidth_gbps=1e-6"}, "must be in"},
		{[]string{"--config", "/dev/zero"}, "not a regular file"},
		{[]string{"--out", file}, "not a directory"},
		{[]string{"--out", filepath.Join(file, "sub")}, "--out"},
		{[]string{"--workload", trace}, "column weights"},
		{[]string{"--workload", zero}, "column weights"},
		{[]string{"--monitor-hold"}, "needs --monitor"},
		{[]string{"--trace-candidates"}, "needs --trace-db"},
		{[]string{"--max-work", "NaN"}, "--max-work"},
	} {
		args := append([]string{"run", "--quiet"}, c.args...)
		if !containsFlag(c.args, "--gemm") && !containsFlag(c.args, "--workload") {
			args = append(args, "--gemm", "64x64x64")
		}
		_, stderr, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code,
				stderr, c.want)
		}
	}
}

func containsFlag(args []string, f string) bool {
	for _, a := range args {
		if a == f {
			return true
		}
	}
	return false
}

// --out is replaced as a whole: an earlier run's results never sit next
// to a new run's config, stale temporary files are removed, and files
// that are not stcsim's are left alone (item 14).
func TestOutReplacesEarlierRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	run := func(gemm string) {
		_, stderr, code := capture(t, func() int {
			return dispatch([]string{"run", "--quiet", "--gemm", gemm, "--out", dir})
		})
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	run("128x128x128")
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, ".results.csv.tmp123"), nil, 0o644)
	stale := filepath.Join(filepath.Dir(dir), ".out.tmp-999999999-1")
	os.Mkdir(stale, 0o755)
	run("256x128x128")
	csv, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if !strings.Contains(string(csv), "256x128x128") || strings.Contains(string(csv), "128x128x128,") {
		t.Errorf("results.csv is not the second run's:\n%s", csv)
	}
	if len(cfg) == 0 {
		t.Error("config.yaml missing")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Error("a file stcsim did not write was touched")
	}
	for _, p := range []string{filepath.Join(dir, ".results.csv.tmp123"), stale} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("stale %s left", p)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("beside --out: %v, want only the directory", entries)
	}
}

// Exit statuses of the smaller commands: bad outputs, shards and flags
// are usage errors found before any work (items 7, 15, 19, 20).
func TestCommandsCheckBeforeWorking(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "afile", "")
	spec := writeFile(t, dir, "s.yaml", "workloads: [{gemms: [64x64x64]}]\n"+
		"grid: {gpu.sm_count: [54, 108]}\n")
	ro := writeFile(t, dir, "ro.db", "")
	os.Chmod(ro, 0o444)
	header := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source\n"
	pts := func(name, rows string) string { return writeFile(t, dir, name, header+rows) }
	furlongs := pts("f.csv", "lat-x,A100-SXM4-40GB,fp16,latency,,,,30,,furlongs,,x\n")
	dup := pts("d.csv", "a,A100-SXM4-40GB,fp16,latency,,,,30,,cycles,,x\n"+
		"a,A100-SXM4-40GB,fp16,latency,,,,30,,cycles,,x\n")
	inf := pts("i.csv", "a,A100-SXM4-40GB,fp16,latency,,,,Inf,,cycles,,x\n")
	huge := pts("h.csv", "g,A100-SXM4,fp16,gemm,1073741824,1073741824,1073741824,1,,us,,x\n")
	good := pts("g.csv", "a,A100-SXM4-40GB,fp16,latency,,,,30,,cycles,,x\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", spec, "--shard", "20/20", "--db", filepath.Join(dir, "x.db")}, "no units"},
		{[]string{"sweep", spec, "--db", dir}, "is a directory"},
		{[]string{"results", "export", ro, "--out", dir}, "is a directory"},
		{[]string{"plot", ro, "--x", "gpu.sm_count", "--out", filepath.Join(file, "p.png")}, "--out"},
		{[]string{"merge", dir, ro}, "is a directory"},
		{[]string{"prune", "--in", "x.npy", "--pattern", "1:128", "--out", filepath.Join(dir, "p")}, "M <= 64"},
		{[]string{"prune", "--in", "x.npy", "--out", file}, "not a directory"},
		{[]string{"micro", "tc", "--chain", "1099511627776"}, "--chain must be in"},
		{[]string{"validate", "--points", furlongs}, "latency rows need cycles"},
		{[]string{"validate", "--points", dup}, "already used at line 2"},
		{[]string{"validate", "--points", inf}, "finite"},
		{[]string{"validate", "--points", huge}, "above the limit"},
		{[]string{"validate", "--points", good, "--max-mape", "NaN"}, "--max-mape"},
		{[]string{"validate", "--points", good, "--calibrated", "nope"}, `no row with id "nope"`},
	} {
		_, stderr, code := capture(t, func() int { return dispatch(c.args) })
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code,
				stderr, c.want)
		}
	}
	if os.Geteuid() != 0 { // root writes read-only files
		_, stderr, code := capture(t, func() int { return dispatch([]string{"sweep", spec, "--db", ro}) })
		if code != exitUsage || !strings.Contains(stderr, "not writable") {
			t.Errorf("sweep --db read-only: exit %d, %q", code, stderr)
		}
	}
	for _, p := range []string{filepath.Join(dir, "x.db"), filepath.Join(dir, "p")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written by a command that failed", p)
		}
	}
}

// --help prints each command's usage once and exits 0 (the flag package
// prints it itself on -h; printing it again doubled it).
func TestHelpPrintsUsageOnce(t *testing.T) {
	for cmd := range commands {
		_, stderr, code := capture(t, func() int { return dispatch([]string{cmd, "--help"}) })
		if code != exitOK || strings.Count(stderr, "usage: stcsim") != 1 {
			t.Errorf("%s --help: exit %d, usage printed %d times", cmd, code,
				strings.Count(stderr, "usage: stcsim"))
		}
	}
}
