package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/sim"
)

// A missing or unknown subcommand, or an argument a subcommand does not
// take, exits 2 saying which; -h exits 0.
func TestSubcommandErrorsSayWhat(t *testing.T) {
	for _, c := range []struct {
		run  func([]string) int
		args []string
		code int
		want string
	}{
		{runMicro, []string{"bogus"}, exitUsage, `unknown subcommand "bogus"`},
		{runMicro, nil, exitUsage, "a subcommand is required"},
		{runMicro, []string{"-h"}, exitOK, "usage: stcsim micro"},
		{runConfig, []string{"bogus"}, exitUsage, `unknown subcommand "bogus"`},
		{runConfig, []string{"list", "extra"}, exitUsage, `takes no arguments (got "extra")`},
	} {
		_, stderr, code := capture(t, func() int { return c.run(c.args) })
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// A flag no workload of the run reads is refused before anything runs,
// and so is an infinite --max-work; where a workload reads it, it runs.
func TestRunRefusesFlagsNothingReads(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gemm", "256x256x256", "--seq", "64"}, "--seq 64: no workload of this run reads it"},
		{[]string{"--workload", "resnet50", "--seq", "64"}, "--seq 64: no workload"},
		{[]string{"--workload", "testdata/none.csv", "--batch", "4"}, "--batch 4: no workload"},
		{[]string{"--gemm", "256x256x256", "--max-work", "Inf"}, "must be a finite number > 0"},
		{[]string{"--gemm", "256x256x256", "--out", ""}, "--out: empty path"},
	} {
		_, stderr, code := capture(t, func() int { return runRun(c.args) })
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	_, stderr, code := capture(t, func() int {
		return runRun([]string{"--gemm", "256x256x256", "--batch", "2", "--mode", "dense",
			"--set", "gpu.sm_count=4", "--quiet", "--format", "csv"})
	})
	if code != exitOK {
		t.Errorf("--gemm with --batch: exit %d: %s", code, stderr)
	}
}

// A microbenchmark's JSON records what produced it, as a run's does.
func TestMicroJSONHasProvenance(t *testing.T) {
	out, code := captureStdout(t, func() int {
		return runMicro([]string{"tc", "--format", "json", "--precision", "fp16", "--mode", "dense",
			"--set", "gpu.sm_count=100"})
	})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var doc struct {
		Provenance *sim.Provenance `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Provenance
	if p == nil || p.Version != sim.Version || len(p.ConfigHash) != 64 || len(p.Command) == 0 ||
		len(p.ConfigFiles) == 0 || len(p.Sets) != 1 || p.Sets[0] != "gpu.sm_count=100" {
		t.Errorf("provenance %+v", p)
	}
}
