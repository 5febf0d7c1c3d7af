package gpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestPruneBoundsHold: the pruner's lower bounds never exceed the cycles
// the run then takes, checked at every check of full runs (a pruner that
// never stops) over dense and sparse, FP16, TF32 and INT8, tiles from
// 64x64 to 256x128, edge tiles, split-K and one to several waves on 16
// SMs; and the shared-memory bound is the one that binds on a sparse
// kernel whose fragments and fills outrun its MMAs (it must reach most
// of the run's length, or pruning gains nothing from it).
func TestPruneBoundsHold(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t, "gpu.sm_count=16")
	for _, c := range []struct {
		m, n, k int
		prec    tensorcore.Precision
		sparse  bool
		tile    string
		split   int
	}{
		{1024, 1024, 512, tensorcore.FP16, true, "128x128x64_64x64_s3", 1},
		{1024, 1024, 512, tensorcore.FP16, false, "128x128x32_64x64_s5", 1},
		{1000, 1000, 520, tensorcore.FP16, true, "256x128x64_64x64_s3", 1},
		{512, 768, 1024, tensorcore.FP16, false, "64x64x32_32x32_s10", 2},
		{512, 512, 512, tensorcore.TF32, true, "128x128x32_64x64_s3", 1},
		{512, 512, 512, tensorcore.TF32, false, "128x128x16_64x64_s5", 1},
		{512, 512, 1024, tensorcore.INT8, true, "128x128x128_64x64_s3", 1},
		{1024, 640, 512, tensorcore.FP16, false, "128x128x32_64x64_s5", 1},
		{1024, 640, 512, tensorcore.FP16, true, "128x128x64_64x64_s3", 1},
	} {
		g := kernel.Shape{M: c.m, N: c.n, K: c.k, Batch: 1, Precision: c.prec, Sparse: c.sparse}
		what := fmt.Sprintf("%+v", c)
		end, pr := boundsHold(t, cfg, g, c.tile, c.split, what)
		// 40 CTAs, two per SM on 16 SMs: eight SMs must run three, so
		// early on the wave bound is about half a CTA (a sixth of the
		// run) above the spread of all MMAs over all tensor cores.
		if c.n == 640 && !c.sparse && pr.waveGain < end/10 {
			t.Errorf("%+v: 40 CTAs on 16 SMs: the wave bound was at most %d above the tensor cores', want %d or more",
				c, pr.waveGain, end/10)
		}
		// The same grid sparse is bound by its bank arrays: whole CTAs
		// lift their bound in the same way.
		if c.n == 640 && c.sparse && pr.smemGain < end/10 {
			t.Errorf("%+v: 40 CTAs on 16 SMs: the bank arrays' wave bound was at most %d above their spread, want %d or more",
				c, pr.smemGain, end/10)
		}
		if c.tile == "128x128x64_64x64_s3" && pr.midSmem < max(pr.midTC, end*3/4) {
			t.Errorf("%+v: shared-memory bound half-way %d: want above the tensor cores' %d and 3/4 of %d",
				c, pr.midSmem, pr.midTC, end)
		}
	}
}

// TestPruneBoundsHoldWithFillPacking: with shared_memory.fill_packing a
// fill packet may cost less than a wavefront, and the bank arrays' bounds
// count a fill by its bytes instead (Filler.LeastWavefronts); they still
// never pass the run's cycles.
func TestPruneBoundsHoldWithFillPacking(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t, "gpu.sm_count=16", "shared_memory.fill_packing=true")
	g := kernel.Shape{M: 1024, N: 640, K: 512, Batch: 1, Precision: tensorcore.FP16, Sparse: true}
	for _, tile := range []string{"128x128x64_64x64_s3", "256x128x64_64x64_s3"} {
		boundsHold(t, cfg, g, tile, 1, tile+", fill packing")
	}
}

// boundsHold runs g on tile to the end under a pruner that works out
// every bound at every check and never stops, logs the bounds half-way
// and fails if one passed the run's cycles; it returns the run's cycles
// and the pruner.
func boundsHold(t *testing.T, cfg *configs.Config, g kernel.Shape, tile string, split int, what string) (uint64, *pruner) {
	t.Helper()
	gp, err := Build(cfg, tilePlan(t, cfg, g, tile, split))
	if err != nil {
		t.Fatal(err)
	}
	gp.watchBelow(math.Inf(1)).exhaustive = true
	if err := gp.Run(); err != nil {
		t.Fatal(err)
	}
	end, pr := gp.ff.reported(gp.EndCycle), gp.prune
	t.Logf("%s: %d cycles; bounds half-way: tensor cores %d, shared memory %d, waves %d; "+
		"whole CTAs above the spread by up to %d (tensor cores) and %d (bank arrays)",
		what, end, pr.midTC, pr.midSmem, pr.midWave, pr.waveGain, pr.smemGain)
	if pr.maxTC > end || pr.maxSmem > end || pr.maxWave > end {
		t.Errorf("%s: a bound passed the run's %d cycles: tensor cores %d, shared memory %d, waves %d",
			what, end, pr.maxTC, pr.maxSmem, pr.maxWave)
	}
	return end, pr
}
