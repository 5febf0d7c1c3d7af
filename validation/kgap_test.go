package validation

import (
	"math"
	"testing"
)

// TestKGapSplitsHeldOutSpeedupsByK: the gap is the long-K rows' mean
// speedup minus the short-K rows', over held-out rows only; rows between
// the groups, calibration rows and non-GEMM rows stay out.
func TestKGapSplitsHeldOutSpeedupsByK(t *testing.T) {
	rows := []Row{
		{Kind: "gemm_speedup", K: 3072, Measured: 1.5, Simulated: 1.4, HeldOut: true},
		{Kind: "gemm_speedup", K: 10240, Measured: 1.7, Simulated: 1.6, HeldOut: true},
		{Kind: "gemm_speedup", K: 768, Measured: 1.2, Simulated: 1.3, HeldOut: true},
		{Kind: "gemm_speedup", K: 1024, Measured: 9, Simulated: 9, HeldOut: true},   // between the groups
		{Kind: "gemm_speedup", K: 16384, Measured: 9, Simulated: 9, HeldOut: false}, // calibration
	}
	s := summarizeKind("gemm_speedup", rows)
	g := s.KGap
	if g == nil {
		t.Fatal("no K gap")
	}
	if g.LongN != 2 || g.ShortN != 1 || math.Abs(g.Measured-0.4) > 1e-12 || math.Abs(g.Simulated-0.2) > 1e-12 {
		t.Fatalf("got %+v, want long 2, short 1, measured +0.4, simulated +0.2", *g)
	}
	if summarizeKind("gemm_speedup", rows[:2]).KGap != nil {
		t.Fatal("a gap without short-K rows")
	}
}
