package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestPruneToleranceKeepsItsPromise: under sim.prune_tolerance t a
// candidate's sample is also stopped once it could beat the leader by
// no more than t of the leader's estimate. Against the exact selection
// (tolerance 0, every estimate run to its end), on shapes whose
// candidates are close: a candidate run to its end under t has the same
// estimate; a stopped one's bound is at most its estimate and at least
// (1 - t) x the chosen kernel's; the chosen kernel is the exact one, with
// the same record, or one whose estimate is within t of it (at most the
// exact winner's / (1 - t)). Some candidate must be stopped earlier than
// at tolerance 0, or the test shows nothing.
func TestPruneToleranceKeepsItsPromise(t *testing.T) {
	if testing.Short() {
		t.Skip("each selection three times")
	}
	t.Parallel()
	const tol = 0.05
	exactLd, err := configs.Load(nil, []string{"gpu.sm_count=16"})
	if err != nil {
		t.Fatal(err)
	}
	tolLd, err := configs.Load(nil, []string{"gpu.sm_count=16", "sim.prune_tolerance=0.05"})
	if err != nil {
		t.Fatal(err)
	}
	earlier := 0
	for _, c := range []struct {
		m, n, k int
		sparse  bool
	}{{512, 1024, 256, false}, {1024, 512, 512, true}, {1024, 1024, 512, false}, {2048, 1024, 256, true},
		{256, 512, 16384, true}} {
		g := kernel.Shape{M: c.m, N: c.n, K: c.k, Batch: 1, Precision: tensorcore.FP16, Sparse: c.sparse}
		full, err := Select(exactLd.Config, g, sampleWatcher{}) // every estimate to its end
		if err != nil {
			t.Fatal(err)
		}
		exact, err := Select(exactLd.Config, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Select(tolLd.Config, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		est := map[string]float64{}
		for _, s := range full.Candidates {
			est[s.Kernel] = s.EstimatedCycles
		}
		bound0 := map[string]float64{}
		for _, s := range exact.Candidates {
			if s.Pruned {
				bound0[s.Kernel] = s.EstimatedCycles
			}
		}
		best := full.Candidates[0].EstimatedCycles
		chosen := est[got.Plan.Name()]
		switch {
		case got.Plan.Name() == exact.Plan.Name():
			if got.Cycles != exact.Cycles || got.TCBusy != exact.TCBusy || got.Mem != exact.Mem {
				t.Errorf("%+v: %s chosen at both tolerances, %d cycles against %d", c,
					got.Plan.Name(), got.Cycles, exact.Cycles)
			}
		case chosen > best/(1-tol):
			t.Errorf("%+v: %s chosen (%.0f), more than %.0f%% behind the best %s (%.0f)", c,
				got.Plan.Name(), chosen, 100*tol, full.Plan.Name(), best)
		}
		for _, s := range got.Candidates {
			e := est[s.Kernel]
			t.Logf("%dx%dx%d sparse=%v %s: %.0f (stopped %v), exact %.0f, at tolerance 0 %.0f", c.m, c.n,
				c.k, c.sparse, s.Kernel, s.EstimatedCycles, s.Pruned, e, bound0[s.Kernel])
			switch {
			case !s.Pruned && s.EstimatedCycles != e:
				t.Errorf("%s: estimate %.0f, run to the end %.0f", s.Kernel, s.EstimatedCycles, e)
			case s.Pruned && (s.EstimatedCycles > e || s.EstimatedCycles < (1-tol)*chosen):
				t.Errorf("%s: bound %.0f outside [%.0f, its estimate %.0f]", s.Kernel,
					s.EstimatedCycles, (1-tol)*chosen, e)
			}
			if b, ok := bound0[s.Kernel]; s.Pruned && (!ok || s.EstimatedCycles < b) {
				earlier++
			}
		}
	}
	if earlier == 0 {
		t.Error("no candidate was stopped earlier than at tolerance 0: pick closer candidates")
	}
}
