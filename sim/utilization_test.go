package sim

import (
	"strings"
	"testing"
)

// Useful utilization counts the layer's own work against the dense peak:
// on M = 64 under a pinned 128-row tile, half of every MMA is padding,
// so the dense kernel's issue-slot occupancy is about twice the useful
// figure (the sparse kernel's about equal to it: its slots are on the
// sparse scale); and the sparse record of a full-tile GEMM is measured on the
// same dense scale, where its issue-slot share is against the sparse
// peak (so useful > TC busy there).
func TestUsefulUtilizationAgainstDensePeak(t *testing.T) {
	t.Parallel()
	sets := []string{"gpu.sm_count=8", "kernel.force_dense=128x128x32_64x64_s5",
		"kernel.force_sparse=128x128x64_64x64_s3"}
	rep := run(t, gemmJob([3]int{64, 2048, 1024}, [3]int{1024, 1024, 1024}), sets...)
	for _, r := range rep.Results {
		if r.UsefulUtilization <= 0 || r.UsefulUtilization > 2 {
			t.Fatalf("%s %s: useful utilization %g", r.Layer, r.Mode, r.UsefulUtilization)
		}
		switch {
		case r.M == 64:
			// Half of each MMA is padding; a sparse MMA does twice the
			// dense-scale work per slot, which cancels it.
			want := 2.0
			if r.SparseApplied {
				want = 1
			}
			if ratio := r.TCUtilization / r.UsefulUtilization; ratio < 0.9*want || ratio > 1.1*want {
				t.Errorf("M=64 on a 128-row tile, %s: TC busy %.3f vs useful %.3f (ratio %.2f, want %g)",
					r.Mode, r.TCUtilization, r.UsefulUtilization, ratio, want)
			}
		case r.Mode.String() == "sparse" && r.SparseApplied:
			if r.UsefulUtilization <= r.TCUtilization {
				t.Errorf("sparse %s: useful %.3f (dense scale) not above TC busy %.3f (sparse scale)",
					r.Layer, r.UsefulUtilization, r.TCUtilization)
			}
		}
	}
}

// At a locked clock a kernel that draws more than the board's limit is
// flagged, in the record and its note; one below it is not, and the
// power-capped policy (which holds the limit) never is. (512^3 on 8 SMs,
// one wave: the flag, not the kernel, is under test.)
func TestLockedAbovePowerLimitIsFlagged(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 512, 512})
	base := []string{"gpu.sm_count=8", "kernel.force_dense=128x128x32_64x64_s5",
		"kernel.force_sparse=128x128x64_64x64_s3"}
	for _, c := range []struct {
		sets []string
		want bool
	}{
		{[]string{"power.limit_w=1"}, true},
		{[]string{"power.limit_w=100000"}, false},
	} {
		rep := run(t, job, append(base, c.sets...)...)
		for _, r := range rep.Results {
			if r.AbovePowerLimit != c.want || strings.Contains(r.Note, "would throttle") != c.want {
				t.Errorf("%v %s: %.0f W, flagged %v, note %q", c.sets, r.Mode, r.AvgPowerW, r.AbovePowerLimit, r.Note)
			}
		}
	}
}
