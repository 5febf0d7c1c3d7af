//go:build long

// The long tier of one kernel's simulation (build tag long; .ci/run runs
// it after the default tier): the fast-forward held to the full
// simulation of DRAM-bound skinny GEMMs, each run twice. The default
// tier keeps the family's bandwidth property
// (TestFastForwardWithinDRAMBandwidth, fastforward_test.go).

package gpu

import (
	"fmt"
	"math"
	"testing"
)

// On the same family the fast-forward's cycles are the full
// simulation's within 1 % (measured -0.98 % to +0.08 % with the A100's
// calibrated launch gap and store ratio; -0.38 % to +0.14 % before them,
// docs/log/2026-12-07-ff-dram.md), and its split of the time by cause
// within 5 points (measured: at most 3.8, barrier and DRAM bandwidth
// on 10240x1x8192 sparse; 2.4 before): the time the DRAM adds beyond the
// window's rate is booked as the window's causes are, and the SMs
// without a CTA in the last wave stay wave quantization.
func TestFastForwardCloseToFullWhenDRAMBound(t *testing.T) {
	t.Parallel()
	for _, c := range dramBoundFamily {
		t.Run(fmt.Sprintf("%dx%dx%d_%s", c.m, c.n, c.k, c.kernel), func(t *testing.T) {
			t.Parallel()
			ff := instrRun(t, c.m, c.n, c.k, c.sparse, c.kernel, dramBoundSets...)
			full := instrRun(t, c.m, c.n, c.k, c.sparse, c.kernel,
				append(dramBoundSets, "sim.fast_forward=false")...)
			if ff.FastForwarded == 0 || full.FastForwarded != 0 {
				t.Fatalf("%d and %d k-steps left out (fast-forwarded, full)", ff.FastForwarded, full.FastForwarded)
			}
			d := float64(ff.Cycles)/float64(full.Cycles) - 1
			if math.Abs(d) > 0.01 {
				t.Errorf("fast-forwarded %d cycles, full %d (%+.2f %%)", ff.Cycles, full.Cycles, 100*d)
			}
			a, b := causeShares(ff.Breakdown), causeShares(full.Breakdown)
			most := 0.0
			for k := range b {
				most = max(most, math.Abs(a[k]-b[k]))
				if math.Abs(a[k]-b[k]) > 0.05 {
					t.Errorf("cause %s: %.4f fast-forwarded, %.4f in full", k, a[k], b[k])
				}
			}
			t.Logf("full %d, fast-forwarded %d cycles (%+.2f %%); causes within %.1f points",
				full.Cycles, ff.Cycles, 100*d, 100*most)
		})
	}
}
