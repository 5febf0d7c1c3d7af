package main

import (
	"testing"

	"github.com/stcsim/stcsim/internal/tally"
)

// `run --gemm` comes through one front door (sim.Prepare): each trace row
// is checked against the trace rules once, becomes a kernel shape once
// per mode, and each distinct shape's candidates are ranked once, however
// many checks (the work and memory guards, the progress bar's estimate)
// and the run read them. Before the front door a row was validated 3
// times, shaped about 6 times and ranked about 4 times (issue 50); the
// ranked count is every selection.Rank call, so ranking a shape again
// anywhere on the way (the selection itself) fails it.
func TestRunGEMMThroughOneFrontDoor(t *testing.T) {
	t.Setenv(cacheEnv, "off")
	for _, c := range []struct {
		args                   []string
		rows, shapes, distinct int64
	}{
		// One row, two modes, two shapes.
		{[]string{"--gemm", "256x256x256"}, 1, 2, 2},
		// Two rows; dense only, so one shape each.
		{[]string{"--gemm", "256x256x256", "--gemm", "128x256x512", "--mode", "dense"}, 2, 2, 2},
		// The instruction tier's selection ranks nothing again either.
		{[]string{"--gemm", "128x128x128", "--mode", "dense", "--set", "sim.fidelity=instruction"}, 1, 1, 1},
	} {
		before := tally.Now()
		args := append([]string{"run", "--set", "gpu.sm_count=4", "--set", "sim.fidelity=fast",
			"--format", "csv", "--quiet"}, c.args...)
		_, stderr, code := capture(t, func() int { return dispatch(args) })
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		got := before.Since()
		want := tally.Snapshot{Validated: c.rows, Shaped: c.shapes, Ranked: c.distinct}
		if got != want {
			t.Errorf("%v: validated %d rows, built %d shapes, ranked %d; want %d, %d, %d",
				c.args, got.Validated, got.Shaped, got.Ranked, want.Validated, want.Shaped, want.Ranked)
		}
	}
}
