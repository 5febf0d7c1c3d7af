package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"

	"github.com/stcsim/stcsim/tensorcore"
)

// TestRasterOrderIsCUTLASSSwizzle checks ctaCoord against CUTLASS's
// GemmIdentityThreadblockSwizzle<8>: bands of up to 8 tile columns walked
// row by row, narrower bands for narrow grids, every tile exactly once.
func TestRasterOrderIsCUTLASSSwizzle(t *testing.T) {
	for _, c := range []struct{ tilesM, tilesN, width int }{
		{6, 384, 8}, {6, 24, 8}, {128, 128, 8}, {16, 5, 4}, {4, 3, 4},
		{3, 2, 2}, {5, 1, 1}, {6, 13, 8},
	} {
		p := &kernelPlan{tilesM: c.tilesM, tilesN: c.tilesN, splitK: 1,
			swizzle: swizzleWidth(c.tilesN)}
		p.shape.Batch = 1
		if p.swizzle != c.width {
			t.Errorf("%dx%d tiles: band width %d, want %d", c.tilesM, c.tilesN, p.swizzle, c.width)
		}
		seen := make(map[[2]int]bool)
		for i := 0; i < c.tilesM*c.tilesN; i++ {
			_, tm, tn, _ := p.ctaCoord(i)
			if tm < 0 || tm >= c.tilesM || tn < 0 || tn >= c.tilesN || seen[[2]int{tm, tn}] {
				t.Fatalf("%dx%d tiles: CTA %d -> (%d,%d) out of range or repeated", c.tilesM, c.tilesN, i, tm, tn)
			}
			seen[[2]int{tm, tn}] = true
			// Full bands follow CUTLASS's formula: m = x >> log, n = y*w + x&(w-1).
			w := p.swizzle
			if y := i / (w * c.tilesM); (y+1)*w <= c.tilesN {
				x := i % (w * c.tilesM)
				if tm != x/w || tn != y*w+x%w {
					t.Fatalf("%dx%d tiles: CTA %d -> (%d,%d), CUTLASS gives (%d,%d)", c.tilesM, c.tilesN, i, tm, tn, x/w, y*w+x%w)
				}
			}
		}
	}
}

// The selection's sample estimate (wave-extrapolated samples at two k-step
// counts) must rank tiles as their simulations over every k-step do (wave
// extrapolation on in both), and come within 6 % of them, on a long-K
// kernel.
func TestSampleEstimatePredictsFullRun(t *testing.T) {
	longTier(t, "two full 1024x1024x12800 kernels")
	t.Parallel() // long: overlaps the other long tests on a second core
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	// The full runs simulate every k-step.
	cfg.Sim.ExtrapolateKSteps = false
	cfg.Sim.FastForward = false
	g := gemmShape{M: 1024, N: 1024, K: 12800, Precision: tensorcore.FP16, Sparse: true, Batch: 1} // 200 k-steps
	plans, _ := candidatePlans(cfg, g)
	var est, full []float64
	for _, name := range []string{"128x128x64_64x64_s3", "256x128x64_64x64_s3"} {
		var p *kernelPlan
		for _, c := range plans {
			if c.name() == name {
				p = c
			}
		}
		if p == nil || p.kSteps <= 2*sampleKSteps {
			t.Fatalf("%s: no plan with a long K (%v)", name, p)
		}
		e, whole, _, err := sampleEstimate(cfg, p, nil, 0, 0)
		if err != nil || whole != nil {
			t.Fatalf("%s: %v, full %v", name, err, whole)
		}
		r, err := simulateKernel(cfg, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		est, full = append(est, e), append(full, float64(r.cycles))
		rel := e/float64(r.cycles) - 1
		t.Logf("%s: estimate %.0f cycles, full run %d (%+.1f%%)", name, e, r.cycles, 100*rel)
		if rel > 0.06 || rel < -0.06 {
			t.Errorf("%s: estimate off by %+.1f%%", name, 100*rel)
		}
	}
	if (est[0] < est[1]) != (full[0] < full[1]) {
		t.Errorf("estimates %v rank the tiles unlike the full runs %v", est, full)
	}
}
