package main

import (
	"strings"
	"testing"
)

// The work bound counts what multiplies the work (issue 35 item 1): a
// 1024^3 GEMM is about 2.7e4 warp k-steps and runs under --max-work 1e5,
// while the same GEMM over a 64-run ensemble or under detailed memory
// (measured 15.6x a fast warp k-step) is refused before anything runs
// (sim's TestWorkFactors checks that the plain GEMM is under the bound).
func TestMaxWorkCountsJitterAndDetailedMemory(t *testing.T) {
	run := func(set ...string) (string, int) {
		args := []string{"run", "--quiet", "--gemm", "1024x1024x1024",
			"--max-work", "1e5"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		_, stderr, code := capture(t, func() int { return dispatch(args) })
		return stderr, code
	}
	for _, set := range []string{"sim.jitter_runs=64", "sim.memory_granularity=detailed"} {
		if stderr, code := run(set); code != exitUsage ||
			!strings.Contains(stderr, "above --max-work") {
			t.Errorf("%s: exit %d, %q; want exit 2 above --max-work", set, code, stderr)
		}
	}
}
