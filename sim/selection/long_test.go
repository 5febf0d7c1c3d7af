//go:build long

// The long tier of kernel selection (build tag long; .ci/run runs it
// after the default tier): the sample estimate held to the full
// simulation of a long-K kernel, minutes of CPU, the metadata bytes
// of 2048^3 kernels, and sim.prune_tolerance held to its promise
// against the exact selection.

package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// The selection's sample estimate (wave-extrapolated samples at two k-step
// counts) must rank tiles as their simulations over every k-step do (wave
// extrapolation on in both), and come within 6 % of them, on a long-K
// kernel.
func TestSampleEstimatePredictsFullRun(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	// The full runs simulate every k-step.
	cfg.Sim.ExtrapolateKSteps = false
	cfg.Sim.FastForward = false
	g := kernel.Shape{M: 1024, N: 1024, K: 12800, Precision: tensorcore.FP16, Sparse: true, Batch: 1} // 200 k-steps
	plans, _ := Candidates(cfg, g)
	var est, full []float64
	for _, name := range []string{"128x128x64_64x64_s3", "256x128x64_64x64_s3"} {
		var p *kernel.Plan
		for _, c := range plans {
			if c.Name() == name {
				p = c
			}
		}
		if p == nil || p.KSteps <= 2*SampleKSteps {
			t.Fatalf("%s: no plan with a long K (%v)", name, p)
		}
		e, whole, _, err := SampleEstimate(cfg, p, nil, 0, 0)
		if err != nil || whole != nil {
			t.Fatalf("%s: %v, full %v", name, err, whole)
		}
		r, err := gpu.Simulate(cfg, p, gpu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		est, full = append(est, e), append(full, float64(r.Cycles))
		rel := e/float64(r.Cycles) - 1
		t.Logf("%s: estimate %.0f cycles, full run %d (%+.1f%%)", name, e, r.Cycles, 100*rel)
		if rel > 0.06 || rel < -0.06 {
			t.Errorf("%s: estimate off by %+.1f%%", name, 100*rel)
		}
	}
	if (est[0] < est[1]) != (full[0] < full[1]) {
		t.Errorf("estimates %v rank the tiles unlike the full runs %v", est, full)
	}
}

// TestMetadataBytes2048: on 2048^3 FP16 (256 CTAs on 108 SMs), 1:4
// and 2:8 keep the same values (K/4 per row) but 2:8 indexes each with 3
// bits instead of 2. TestMetadataBytesFollowPattern holds the same on
// 512^3 in the default tier.
func TestMetadataBytes2048(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	force := "kernel.force=128x128x64_64x64_s3"
	a := patternKernel(t, 2048, 2048, 2048, tensorcore.Pattern{N: 1, M: 4}, force)
	b := patternKernel(t, 2048, 2048, 2048, tensorcore.Pattern{N: 2, M: 8}, force)
	ma, mb := a.Mem.MetadataBytes(), b.Mem.MetadataBytes()
	if ma == 0 || 2*mb != 3*ma {
		t.Errorf("metadata bytes 1:4 %d, 2:8 %d: want 2:8 = 3/2 x 1:4", ma, mb)
	}
	if ka, kb := a.Mem.PerClass[memory.AValues].L2Bytes, b.Mem.PerClass[memory.AValues].L2Bytes; ka != kb {
		t.Errorf("A value bytes 1:4 %d, 2:8 %d: want equal", ka, kb)
	}
}

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
