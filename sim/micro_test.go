package sim

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// Through the scheduler, every precision and mode against its published
// figure:
//   - independent issue: one MMA per 8 cycles per sub-partition. Dense:
//     HMMA.16816 (fp16, bf16) takes 8 cycles, HMMA.1684 (tf32) and
//     IMMA.16816 (int8) 4 each (Abdelkhalik et al. 2022, arXiv
//     2208.11174, Table 3), and the model's HMMA.1688 and IMMA.16832 are
//     two of those; sparse: the same instruction rate gives the 2x
//     sparse peak;
//   - the resulting peak at 108 SMs and 1410 MHz: the A100 whitepaper's
//     312/624 (fp16, bf16), 156/312 (tf32), 624/1248 (int8) dense/sparse;
//   - fp16 sparse mma.sp.m16n8k32 with 8 warps per SM and 2 MMAs in
//     flight per warp: 1979 dense-equivalent FMA/clk/SM (Sun et al., TPDS
//     2023, arXiv 2206.02874, Table 6); the model gives 1819 (-8 %, its
//     36-cycle sparse latency shows through four chains per
//     sub-partition), so the bound is 10 %.
func TestMicroSchedulerMatchesPublished(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t)
	peak := map[tensorcore.Precision][2]float64{tensorcore.FP16: {312, 624},
		tensorcore.BF16: {312, 624}, tensorcore.TF32: {156, 312}, tensorcore.INT8: {624, 1248}}
	for _, p := range tensorcore.Precisions {
		for i, m := range tensorcore.Modes {
			r, err := MicroScheduler(cfg, p, m)
			if err != nil {
				t.Fatal(err)
			}
			if r.IndependentInterval < 8 || r.IndependentInterval > 8.1 {
				t.Errorf("%s %s: %.3f cycles per MMA per sub-partition, want 8", p, m, r.IndependentInterval)
			}
			if want := peak[p][i]; math.Abs(r.TFLOPS-want) > 0.01*want {
				t.Errorf("%s %s: %.1f TFLOPS through the scheduler, whitepaper %.0f", p, m, r.TFLOPS, want)
			}
			if r.DependentLatency <= r.IndependentInterval {
				t.Errorf("%s %s: dependent issue %.1f cycles, not above the %.1f-cycle interval",
					p, m, r.DependentLatency, r.IndependentInterval)
			}
		}
	}
	sp, err := MicroScheduler(cfg, tensorcore.FP16, tensorcore.Sparse)
	if err != nil {
		t.Fatal(err)
	}
	if d := sp.PairsFMAPerClkPerSM/1979 - 1; math.Abs(d) > 0.10 {
		t.Errorf("fp16 mma.sp, 8 warps x 2 MMAs: %.0f FMA/clk/SM, measured 1979 (%+.1f %%)",
			sp.PairsFMAPerClkPerSM, 100*d)
	}
}

// Four independent chains per sub-partition hide a latency of at most
// four intervals: with the 32-cycle dense latency the dense rate is the
// peak, and each cycle of latency beyond it slows the sparse rate.
func TestMicroSchedulerPairsShowLatency(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t)
	d, err := MicroScheduler(cfg, tensorcore.FP16, tensorcore.Dense)
	if err != nil {
		t.Fatal(err)
	}
	if d.PairsFMAPerClkPerSM < 0.99*1024 {
		t.Errorf("dense, 8 warps x 2 MMAs: %.0f FMA/clk/SM, want the 1024 peak", d.PairsFMAPerClkPerSM)
	}
	fast, err := MicroScheduler(loadTest(t, "tensorcore.fp16.metadata_decode_latency=0",
		"tensorcore.fp16.mux_level_latency=0"), tensorcore.FP16, tensorcore.Sparse)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := MicroScheduler(cfg, tensorcore.FP16, tensorcore.Sparse)
	if err != nil {
		t.Fatal(err)
	}
	if fast.DependentLatency != d.DependentLatency || slow.PairsFMAPerClkPerSM >= fast.PairsFMAPerClkPerSM {
		t.Errorf("sparse at %.0f / %.0f cycles latency: %.0f / %.0f FMA/clk/SM",
			fast.DependentLatency, slow.DependentLatency, fast.PairsFMAPerClkPerSM, slow.PairsFMAPerClkPerSM)
	}
}

// Through the scheduler, dense FP16 HMMA.16816 issues every 8 cycles per
// sub-partition (A100: 1024 dense FP16 FMA/clk/SM over 4 tensor cores,
// 2048 FMAs per m16n8k16) and a dependent chain pays the MMA latency.
func TestMicroSchedulerHMMA(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t)
	r, err := MicroScheduler(cfg, tensorcore.FP16, tensorcore.Dense)
	if err != nil {
		t.Fatal(err)
	}
	if r.IndependentInterval < 8 || r.IndependentInterval > 8.1 {
		t.Errorf("independent issue: %.3f cycles per MMA per sub-partition, want 8", r.IndependentInterval)
	}
	if r.DependentLatency < 31 || r.DependentLatency > 33 {
		t.Errorf("dependent issue: %.2f cycles, want the configured 32", r.DependentLatency)
	}
	slow, err := MicroScheduler(loadTest(t, "sm.register_file_bytes_per_clk=128"), tensorcore.FP16, tensorcore.Dense)
	if err != nil {
		t.Fatal(err)
	}
	if slow.IndependentInterval <= r.IndependentInterval {
		t.Errorf("register file 128 B/clk: %.2f cycles per MMA, want more than %.2f",
			slow.IndependentInterval, r.IndependentInterval)
	}
}
