package sim

import (
	"testing"
	"time"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func gemmWork(t *testing.T, cfg *configs.Config, m, n, k int) float64 {
	t.Helper()
	tr := &workloads.Trace{Name: "g", GEMMs: []workloads.GEMM{{Name: "g",
		M: m, N: n, K: k, Precision: tensorcore.FP16,
		Sparsity: workloads.Sparse24, Count: 1, Batch: 1}}}
	return mustPrepare(t, cfg, Job{Workloads: []*workloads.Trace{tr},
		Modes: []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse}}).Work()
}

// The work estimate grows with every dimension and flags the GEMMs that
// ran for hours (issue 13 items 4, 6): a deeper K or a larger M is never
// less work, and 256x256x2^30 is far above the default bound, when every
// k-step is simulated (K extrapolation and the fast-forward bound a deep
// GEMM's work: they are off here).
func TestWorkEstimateGrowsWithTheGEMM(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"sim.extrapolate_ksteps=false", "sim.fast_forward=false"})
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
// counted running it. The SMs' meter is process-wide, so the test runs
// in a process of its own (aloneInProcess); its longer cases run on 16
// SMs, the estimate being per CTA and per wave.
func TestWorkEstimateMatchesSimulatedKSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulations")
	}
	if !aloneInProcess(t) {
		return
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
		{[]string{"sim.extrapolate_waves=false"}, 1024, 1024, 512, false},
		{[]string{"sim.extrapolate_waves=false", "gpu.sm_count=16"}, 2048, 1024, 256, false},
		{[]string{"gpu.sm_count=27"}, 1024, 1024, 1024, false},
		// Stream-K and serial split-K: simulated whole, no fast path.
		{[]string{"kernel.stream_k=true", "gpu.sm_count=16"}, 640, 1024, 2048, false},
		{[]string{"kernel.force=128x128x64_64x64_s3_serialk2"}, 512, 512, 2048, false},
		// The fast-forward: one wave of 64-k-step CTAs, on and off; a
		// deep K simulated whole (its samples and split-K candidates
		// fast-forwarded); two waves on 16 SMs, the last one shortened
		// (one candidate: with three, the two the selection prunes are
		// counted whole and the estimate is 2.47x).
		{[]string{"gpu.sm_count=16"}, 512, 512, 4096, false},
		{[]string{"sim.fast_forward=false", "gpu.sm_count=16"}, 512, 512, 4096, false},
		{[]string{"sim.extrapolate_ksteps=false", "gpu.sm_count=16"}, 256, 256, 32768, false},
		{[]string{"gpu.sm_count=16", "kernel.simulated_candidates=1"}, 1024, 1024, 2048, false},
		// A dense kernel above the limit at 1410 MHz: re-timed (16 SMs
		// under 90 W, as TestPowerCappedClocks).
		{[]string{"gpu.clock_policy=power_capped", "gpu.sm_count=16", "power.limit_w=90"}, 512, 1024, 2048, true},
	} {
		ld, job := oneGEMM(t, c.sets, c.m, c.n, c.k)
		if c.dense {
			job.Modes = []tensorcore.Mode{tensorcore.Dense}
		}
		est := mustPrepare(t, ld.Config, job).KSteps()
		start := time.Now()
		before := WarpStepsSimulated()
		if _, err := Run(ld, job); err != nil {
			t.Fatal(err)
		}
		got := float64(WarpStepsSimulated() - before)
		t.Logf("%v %dx%dx%d: estimate %.4g, simulated %.4g (%.2f), %.1f s", c.sets,
			c.m, c.n, c.k, est, got, est/got, time.Since(start).Seconds())
		if est > 2*got || est < got/2 {
			t.Errorf("%v %dx%dx%d: estimate %.4g warp k-steps, simulated %.4g",
				c.sets, c.m, c.n, c.k, est, got)
		}
	}
}

// Where the fast-forward leaves a deep GEMM's k-steps out, their tiles
// are still touched in the L2 tags, and that costs: the work still grows
// with K, at TouchCost per k-step left out (2^30/64 k-steps of each of 4
// CTAs of 256x256x2^30 come to more than an hour of one core).
func TestWorkEstimateCountsTheTouchedKSteps(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"sim.extrapolate_ksteps=false"})
	if err != nil {
		t.Fatal(err)
	}
	a := gemmWork(t, ld.Config, 256, 256, 1<<24)
	b := gemmWork(t, ld.Config, 256, 256, 1<<26)
	if b < 3*a {
		t.Errorf("4x the k-steps left out: work %.3g, against %.3g", b, a)
	}
	if w := gemmWork(t, ld.Config, 256, 256, 1<<30); w < TouchCost*4*(1<<30)/64 {
		t.Errorf("256x256x2^30: work %.3g, below the touch of 4 CTAs' k-steps", w)
	}
}

// oneGEMM is the config of sets and a job of one FP16 2:4 GEMM in
// sparse mode.
func oneGEMM(t *testing.T, sets []string, m, n, k int) (*configs.Loaded, Job) {
	t.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	tr := &workloads.Trace{Name: "g", GEMMs: []workloads.GEMM{{Name: "g",
		M: m, N: n, K: k, Precision: tensorcore.FP16,
		Sparsity: workloads.Sparse24, Count: 1, Batch: 1}}}
	return ld, Job{Workloads: []*workloads.Trace{tr},
		Modes: []tensorcore.Mode{tensorcore.Sparse}}
}
