package sim

import (
	"fmt"
	"math"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
)

// sampleWatcher asks for the selection's samples and ignores them: with
// it the selection runs every candidate's sample to the end.
type sampleWatcher struct{}

func (sampleWatcher) KernelBuilt(string, akita.Engine, []akita.Component) {}
func (sampleWatcher) KernelDone(string)                                   {}
func (sampleWatcher) WantsSamples() bool                                  { return true }

// TestPruningKeepsTheSelection: stopping a candidate's sample once it
// provably loses changes neither the kernel chosen nor the record; every
// stopped candidate's bound lies between the winner's estimate and its own
// estimate run to the end. Shapes and modes whose candidates' estimates
// are far apart (so that some are stopped), on 16 SMs; 2048x2048x256 has
// 8 waves, so that its samples are wave-extrapolated, and 256x512x16384
// is long in K, so that its samples are fitted along K (kFit).
func TestPruningKeepsTheSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("each selection twice")
	}
	t.Parallel() // long: overlaps the other long tests on a second core
	ld, err := configs.Load(nil, []string{"gpu.sm_count=16"})
	if err != nil {
		t.Fatal(err)
	}
	pruned := 0
	for _, c := range []struct {
		m, n, k int
		sparse  bool
	}{{256, 2048, 128, true}, {512, 1024, 256, false}, {1024, 512, 512, true}, {256, 6144, 64, false},
		{2048, 2048, 256, false}, {256, 512, 16384, true}} {
		g := kernel.Shape{M: c.m, N: c.n, K: c.k, Batch: 1, Precision: tensorcore.FP16, Sparse: c.sparse}
		fast, err := selection.Select(ld.Config, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := selection.Select(ld.Config, g, sampleWatcher{})
		if err != nil {
			t.Fatal(err)
		}
		if fast.Plan.Name() != slow.Plan.Name() || fast.Cycles != slow.Cycles ||
			fast.TCBusy != slow.TCBusy || fast.Mem != slow.Mem {
			t.Fatalf("%+v: pruned selection %s, %d cycles; unpruned %s, %d cycles", c,
				fast.Plan.Name(), fast.Cycles, slow.Plan.Name(), slow.Cycles)
		}
		if c.m == 2048 && !slow.Extrapolated {
			t.Errorf("%+v: not wave-extrapolated", c)
		}
		exact := map[string]float64{}
		for _, s := range slow.Candidates {
			if s.Pruned {
				t.Fatalf("%+v: %s pruned with samples watched", c, s.Kernel)
			}
			exact[s.Kernel] = s.EstimatedCycles
		}
		win := slow.Candidates[0].EstimatedCycles
		for _, f := range fast.Candidates {
			e := exact[f.Kernel]
			t.Logf("%dx%dx%d sparse=%v %s: %.0f (pruned %v), run to the end %.0f", c.m, c.n, c.k,
				c.sparse, f.Kernel, f.EstimatedCycles, f.Pruned, e)
			switch {
			case !f.Pruned && f.EstimatedCycles != e:
				t.Errorf("%s: estimate %.0f, unpruned %.0f", f.Kernel, f.EstimatedCycles, e)
			case f.Pruned && (f.EstimatedCycles <= win || f.EstimatedCycles > e):
				t.Errorf("%s: bound %.0f outside (winner %.0f, its estimate %.0f]", f.Kernel,
					f.EstimatedCycles, win, e)
			}
			if f.Pruned {
				pruned++
			}
		}
	}
	if pruned == 0 {
		t.Error("no candidate was pruned: pick shapes whose candidates differ more")
	}
}

// tilePlan plans g on the library's tile of that name.
func tilePlan(t *testing.T, cfg *configs.Config, g kernel.Shape, name string, split int) *kernel.Plan {
	t.Helper()
	for _, c := range cfg.Kernel.Candidates {
		if c.Name() == name {
			p, err := kernel.New(cfg, g, c, split)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no tile %s", name)
	return nil
}

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
		if c.n == 640 && !c.sparse && pr.WaveGain < end/10 {
			t.Errorf("%+v: 40 CTAs on 16 SMs: the wave bound was at most %d above the tensor cores', want %d or more",
				c, pr.WaveGain, end/10)
		}
		// The same grid sparse is bound by its bank arrays: whole CTAs
		// lift their bound in the same way.
		if c.n == 640 && c.sparse && pr.SmemGain < end/10 {
			t.Errorf("%+v: 40 CTAs on 16 SMs: the bank arrays' wave bound was at most %d above their spread, want %d or more",
				c, pr.SmemGain, end/10)
		}
		if c.tile == "128x128x64_64x64_s3" && pr.MidSmem < max(pr.MidTC, end*3/4) {
			t.Errorf("%+v: shared-memory bound half-way %d: want above the tensor cores' %d and 3/4 of %d",
				c, pr.MidSmem, pr.MidTC, end)
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
func boundsHold(t *testing.T, cfg *configs.Config, g kernel.Shape, tile string, split int, what string) (uint64, *gpu.Pruner) {
	t.Helper()
	gp, err := gpu.Build(cfg, tilePlan(t, cfg, g, tile, split))
	if err != nil {
		t.Fatal(err)
	}
	gp.WatchBelow(math.Inf(1)).Exhaustive = true
	if err := gp.Run(); err != nil {
		t.Fatal(err)
	}
	end, pr := gp.FF.Reported(gp.EndCycle), gp.Prune
	t.Logf("%s: %d cycles; bounds half-way: tensor cores %d, shared memory %d, waves %d; "+
		"whole CTAs above the spread by up to %d (tensor cores) and %d (bank arrays)",
		what, end, pr.MidTC, pr.MidSmem, pr.MidWave, pr.WaveGain, pr.SmemGain)
	if pr.MaxTC > end || pr.MaxSmem > end || pr.MaxWave > end {
		t.Errorf("%s: a bound passed the run's %d cycles: tensor cores %d, shared memory %d, waves %d",
			what, end, pr.MaxTC, pr.MaxSmem, pr.MaxWave)
	}
	return end, pr
}
