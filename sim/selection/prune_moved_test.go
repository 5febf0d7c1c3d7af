package selection

import (
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// Moved from package sim: it tests the selection's pruning.

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
		fast, err := Select(ld.Config, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := Select(ld.Config, g, sampleWatcher{})
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
