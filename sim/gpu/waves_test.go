package gpu

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// tilePlan is the plan of tile name at split-K split for g.
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

// Every extrapolated kernel leaves out at least one wave: the fewest
// waves extrapolated exceed the tracked waves and the last one.
func TestExtrapolationLeavesAWaveOut(t *testing.T) {
	t.Parallel()
	for occ := 1; occ <= 4; occ++ {
		if n := TrackedWaves(&kernel.Plan{Occupancy: occ}); minExtrapolatedWaves < n+2 {
			t.Errorf("%d CTAs per SM: %d tracked waves and the last, but kernels of %d waves are extrapolated",
				occ, n, minExtrapolatedWaves)
		}
	}
}

// A GEMV's waves are extrapolated from 4 k-steps per CTA (K = 4096 in
// fp16) and 8 waves up; one of a single k-step is simulated whole.
func TestGEMVExtrapolatesFromFourKSteps(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t)
	for _, c := range []struct {
		k    int
		want bool
	}{{1024, false}, {3072, false}, {4096, true}, {11008, true}} {
		p, err := kernel.NewGEMV(cfg, kernel.Shape{M: 65536, N: 1, K: c.k, Batch: 1,
			Precision: tensorcore.FP16})
		if err != nil {
			t.Fatal(err)
		}
		if _, got := ExtrapolatedLaunch(cfg, p, cfg.GPU.SMCount*p.Occupancy); got != c.want {
			t.Errorf("K = %d (%d k-steps, %d waves): extrapolated %v, want %v", c.k, p.KSteps,
				p.Waves(cfg.GPU.SMCount), got, c.want)
		}
	}
}

// skippedMMAs counts the MMAs of the CTAs from launched on without a loop
// over them (a batch of 2^30 tiny GEMMs has 2^30 CTAs): it must equal the
// sum over those CTAs of their own k-steps' MMAs, split-K's last split
// included.
func TestSkippedMMAsCountsEachCTA(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t)
	for _, c := range []struct {
		m, n, k, batch, split int
		tile                  string
	}{
		{512, 384, 1000, 1, 3, "128x128x32_64x64_s5"},
		{300, 200, 4128, 2, 2, "64x64x32_32x32_s10"},
		{256, 256, 256, 3, 1, "128x128x32_64x64_s5"},
	} {
		g := kernel.Shape{M: c.m, N: c.n, K: c.k, Batch: c.batch, Precision: tensorcore.FP16}
		p := tilePlan(t, cfg, g, c.tile, c.split)
		if c.split > 1 && p.KSteps == p.LastKSteps {
			t.Fatalf("%+v: the last split has the others' k-steps: pick a K that leaves a remainder", c)
		}
		per := uint64(p.Warps * p.Groups * p.MMAPerGroup)
		for _, from := range []int{0, 1, p.CTAs / 3, p.CTAs - p.CTAs/c.split - 1, p.CTAs - 1, p.CTAs} {
			if from < 0 {
				continue
			}
			var want uint64
			for i := from; i < p.CTAs; i++ {
				split := kernel.NewCTA(p, i).Split
				want += uint64(ctaSteps(p, split)) * per
			}
			if got := skippedMMAs(p, from); got != want {
				t.Errorf("%+v from CTA %d of %d: %d MMAs, want %d", c, from, p.CTAs, got, want)
			}
		}
	}
}

// ctaSteps is the k-steps a CTA of split runs, from the plan's public
// counts: every split's KSteps but the last's LastKSteps.
func ctaSteps(p *kernel.Plan, split int) int {
	if split == p.SplitK-1 {
		return p.LastKSteps
	}
	return p.KSteps
}

// Long CTAs (128 k-steps) at two per SM in 5 waves are wave-extrapolated
// where the tensor cores bind (1024x1280x4096 dense on 8 SMs, the
// family of sim's TestLongCTAsExtrapolateFromFiveWaves) and left to the
// fast-forward where the DRAM does (a decode-shaped 10240x1x8192 sparse
// on 16 SMs at 230 GB/s, whose CTAs keep in step: the fast-forward left
// out 68 % of its k-steps, extrapolation would leave out 20 %); at 4
// waves neither is extrapolated.
func TestFewWavesExtrapolatedWhereTensorBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		g    kernel.Shape
		tile string
		sets []string
		want bool
	}{
		{kernel.Shape{M: 1024, N: 1280, K: 4096}, "128x128x32_64x64_s5", []string{"gpu.sm_count=8", "dram.bandwidth_gbps=115"}, true},
		{kernel.Shape{M: 1024, N: 1024, K: 4096}, "128x128x32_64x64_s5", []string{"gpu.sm_count=8", "dram.bandwidth_gbps=115"}, false},
		{kernel.Shape{M: 10240, N: 1, K: 8192, Sparse: true}, "64x64x64_32x32_s6", []string{"gpu.sm_count=16", "dram.bandwidth_gbps=230"}, false},
	} {
		cfg := loadTest(t, c.sets...)
		c.g.Batch, c.g.Precision = 1, tensorcore.FP16
		p := tilePlan(t, cfg, c.g, c.tile, 1)
		_, got := ExtrapolatedLaunch(cfg, p, cfg.GPU.SMCount*p.Occupancy)
		t.Logf("%dx%dx%d %s: %d waves of %d CTAs per SM, tensor-bound %v, extrapolated %v", c.g.M, c.g.N, c.g.K,
			c.tile, p.Waves(cfg.GPU.SMCount), p.Occupancy, tensorBound(cfg, p), got)
		if got != c.want || p.Occupancy != 2 {
			t.Errorf("%dx%dx%d %s at %d CTAs per SM: extrapolated %v, want %v", c.g.M, c.g.N, c.g.K, c.tile,
				p.Occupancy, got, c.want)
		}
	}
}
