package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// run refuses a job whose estimated peak heap is above --max-memory
// before anything runs (issue 35 item 1: a 512^3 GEMM under detailed
// memory took 1.07 GB against 113 MB fast): detailed memory over a
// 2.5 GB L2 (Akita's caches hold their data) is refused under the
// default bound, a 256^3 job under 10 MB, and the bound must be a
// finite positive number.
func TestRunMaxMemory(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gemm", "256x256x256", "--set", "sim.memory_granularity=detailed",
			"--set", "l2.size_kb=2621440"}, "above --max-memory"},
		{[]string{"--gemm", "256x256x256", "--max-memory", "1e7"}, "estimated peak memory"},
		{[]string{"--gemm", "256x256x256", "--max-memory", "NaN"}, "must be a finite number"},
	} {
		_, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"run", "--quiet", "--no-cache"}, c.args...))
		})
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, stderr, c.want)
		}
	}
}

// sweep refuses a point whose estimated peak memory, --jobs units of it
// at once, is above --max-memory, by its dry run too, naming the point.
func TestSweepMaxMemory(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "s.yaml", "workloads: [{name: w, gemms: [256x256x256]}]\n"+
		"grid: {gpu.sm_count: [4, 8]}\n")
	db := filepath.Join(dir, "s.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-memory", "1e7"}, "point 1 (gpu.sm_count=4) workload w: estimated peak memory"},
		{[]string{"--max-memory", "NaN"}, "must be a finite number"},
	} {
		_, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"sweep", spec, "--dry-run", "--db", db, "--jobs", "2"}, c.args...))
		})
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, stderr, c.want)
		}
	}
}
