package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
)

// A locked run whose kernel draws more than the board's limit gives its
// totals under power_capped too: a lower clock and a longer time than
// locked, the same as a run under power_capped gives, in the JSON and in
// the table's totals.
func TestRunGivesPowerCappedTotals(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a GEMM at several clocks")
	}
	args := []string{"run", "--gemm", "1024x1024x1024", "--mode", "dense", "--quiet",
		"--set", "power.limit_w=200", "--set", "sim.jitter_runs=1", "--set", "kernel.simulated_candidates=1"}
	// The table (last) is the JSON run's records again: read from a cache
	// of the test's own. The power_capped reference simulates anew.
	cached := append(slices.Clone(args), "--cache", t.TempDir())
	out, se, code := capture(t, func() int { return dispatch(append(slices.Clone(cached), "--format", "json")) })
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, se)
	}
	var rep results.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || !rep.Results[0].AbovePowerLimit {
		t.Fatalf("the kernel is not above 200 W at the locked clock: %+v", rep.Results)
	}
	if len(rep.PowerCapped) != 1 {
		t.Fatalf("power_capped_totals %+v, want one", rep.PowerCapped)
	}
	c, locked := rep.PowerCapped[0], rep.Totals[0]
	if c.MaxClockMHz >= rep.Results[0].ClockMHz || c.TimeUS <= locked.TimeUS || c.LimitW != 200 {
		t.Errorf("capped %+v against locked %+v at %d MHz: want a lower clock and a longer time",
			c, locked, rep.Results[0].ClockMHz)
	}
	// The reference: the same run under power_capped itself.
	out, se, code = capture(t, func() int {
		return dispatch(append(args, "--format", "json", "--set", "gpu.clock_policy=power_capped"))
	})
	var ref results.Report
	if err := json.Unmarshal([]byte(out), &ref); code != exitOK || err != nil {
		t.Fatalf("power_capped run: exit %d, %v: %s", code, err, se)
	}
	if len(ref.Totals) != 1 || ref.Totals[0].TimeUS != c.TimeUS || ref.Results[0].ClockMHz != c.MaxClockMHz {
		t.Errorf("capped totals %+v, but a power_capped run gives %+v at %d MHz", c, ref.Totals,
			ref.Results[0].ClockMHz)
	}
	table, _, _ := capture(t, func() int { return dispatch(cached) })
	if !strings.Contains(table, "under gpu.clock_policy=power_capped") {
		t.Errorf("the table does not give the power-capped totals:\n%s", table)
	}
}
