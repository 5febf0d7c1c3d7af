package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/sm"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func gemmWork(t *testing.T, cfg *configs.Config, m, n, k int) float64 {
	t.Helper()
	tr := &workloads.Trace{Name: "g", GEMMs: []workloads.GEMM{{Name: "g",
		M: m, N: n, K: k, Precision: tensorcore.FP16,
		Sparsity: workloads.Sparse24, Count: 1, Batch: 1}}}
	return EstimateWork(cfg, Job{Workloads: []*workloads.Trace{tr},
		Modes: []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse}})
}

// The work estimate grows with every dimension and flags the GEMMs that
// ran for hours (issue 13 items 4, 6): a deeper K or a larger M is never
// less work, and 256x256x2^30 is far above the default bound, when every
// k-step is simulated (K extrapolation bounds a deep GEMM's work: it is
// off here).
func TestWorkEstimateGrowsWithTheGEMM(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"sim.extrapolate_ksteps=false"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	prev := 0.0
	for k := 256; k <= 1<<20; k *= 4 {
		w := gemmWork(t, cfg, 1024, 1024, k)
		if w <= prev {
			t.Errorf("K=%d: work %.3g not above K/4's %.3g", k, w, prev)
		}
		prev = w
	}
	if a, b := gemmWork(t, cfg, 1024, 1024, 4096), gemmWork(t, cfg, 8192, 1024, 4096); b < a {
		t.Errorf("8x the rows: work %.3g < %.3g", b, a)
	}
	if w := gemmWork(t, cfg, 256, 256, 1<<30); w < 3e8 {
		t.Errorf("256x256x2^30: work %.3g, below the default --max-work", w)
	}
}

// The work estimate counts the warp k-steps a job really simulates
// (issue 35 item 1): over the settings that multiply or cut the work (the
// jitter ensemble, detailed memory, the fast-forward, wave extrapolation,
// fewer SMs, the schedules simulated whole) the estimate is within 2x of the warp k-steps the SMs
// counted running it. Not parallel: the SMs' meter is process-wide, and
// a sequential test runs alone.
func TestWorkEstimateMatchesSimulatedKSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulations")
	}
	for _, c := range []struct {
		sets    []string
		m, n, k int
		dense   bool
	}{
		{nil, 512, 512, 512, false},
		{nil, 1024, 1024, 1024, false},
		{[]string{"sim.jitter_runs=4"}, 512, 512, 512, false},
		{[]string{"sim.memory_granularity=detailed"}, 256, 256, 256, false},
		{[]string{"sim.fast_forward=false"}, 1024, 1024, 1024, false},
		{[]string{"sim.extrapolate_waves=false"}, 1024, 1024, 512, false},
		{[]string{"sim.extrapolate_waves=false"}, 4096, 2048, 256, false},
		{[]string{"gpu.sm_count=27"}, 1024, 1024, 1024, false},
		// Stream-K and serial split-K: simulated whole, no fast path.
		{[]string{"kernel.stream_k=true", "gpu.sm_count=16"}, 640, 1024, 2048, false},
		{[]string{"kernel.force=128x128x64_64x64_s3_serialk2"}, 512, 512, 2048, false},
		// A dense kernel above the 400 W limit at 1410 MHz: re-timed.
		{[]string{"gpu.clock_policy=power_capped"}, 2048, 2048, 1024, true},
	} {
		ld, err := configs.Load(nil, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		tr := &workloads.Trace{Name: "g", GEMMs: []workloads.GEMM{{Name: "g",
			M: c.m, N: c.n, K: c.k, Precision: tensorcore.FP16,
			Sparsity: workloads.Sparse24, Count: 1, Batch: 1}}}
		job := Job{Workloads: []*workloads.Trace{tr},
			Modes: []tensorcore.Mode{tensorcore.Sparse}}
		if c.dense {
			job.Modes = []tensorcore.Mode{tensorcore.Dense}
		}
		est := EstimateKSteps(ld.Config, job)
		before := sm.WarpStepsSimulated()
		if _, err := Run(ld, job); err != nil {
			t.Fatal(err)
		}
		got := float64(sm.WarpStepsSimulated() - before)
		t.Logf("%v %dx%dx%d: estimate %.4g, simulated %.4g (%.2f)", c.sets,
			c.m, c.n, c.k, est, got, est/got)
		if est > 2*got || est < got/2 {
			t.Errorf("%v %dx%dx%d: estimate %.4g warp k-steps, simulated %.4g",
				c.sets, c.m, c.n, c.k, est, got)
		}
	}
}
