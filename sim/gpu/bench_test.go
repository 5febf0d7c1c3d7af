package gpu

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// BenchmarkKernel2048 simulates one 2048^3 FP16 kernel of a fixed tile,
// dense and sparse.
func BenchmarkKernel2048(b *testing.B) {
	cfg := loadTest(b)
	benchModes(b, cfg, 2048, cfg.Kernel.Candidates[10], func(b *testing.B, p *kernel.Plan) {
		for i := 0; i < b.N; i++ {
			if _, err := Simulate(cfg, p, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInstructionSM is the instruction-level SM's own speed: one
// 2048x2048x1024 FP16 kernel per mode on a fixed tile, reported in warp
// instructions per second.
func BenchmarkInstructionSM(b *testing.B) {
	cfg := loadTest(b)
	benchModes(b, cfg, 1024, cfg.Kernel.Candidates[11], func(b *testing.B, p *kernel.Plan) {
		var instrs uint64
		for i := 0; i < b.N; i++ {
			gp, err := Build(cfg, p)
			if err != nil {
				b.Fatal(err)
			}
			if err := gp.Run(); err != nil {
				b.Fatal(err)
			}
			instrs += gp.Issued
		}
		b.ReportMetric(float64(instrs)/b.Elapsed().Seconds(), "warp-instr/s")
	})
}

// benchModes runs bench as sub-benchmarks "dense" and "sparse", each on
// the plan of tile for a 2048x2048xk FP16 GEMM in that mode.
func benchModes(b *testing.B, cfg *configs.Config, k int, tile configs.TileConfig,
	bench func(b *testing.B, p *kernel.Plan)) {
	for _, sparse := range []bool{false, true} {
		g := kernel.Shape{M: 2048, N: 2048, K: k, Batch: 1,
			Precision: tensorcore.FP16, Sparse: sparse}
		p, err := kernel.New(cfg, g, tile, 1)
		if err != nil {
			b.Fatal(err)
		}
		name := "dense"
		if sparse {
			name = "sparse"
		}
		b.Run(name, func(b *testing.B) { bench(b, p) })
	}
}

// BenchmarkPrefillDenseWinner is the cold LLM prefill's hot kernel in
// small: the dense weight GEMMs' winner (128x128x32_64x64_s5, two CTAs
// per SM, 128 k-steps per CTA) on a quarter of the A100's SMs, with the
// prefill's 2.4 waves (1024x2048x4096 FP16 on 27 SMs), simulated with
// the default fast paths: what the prefill's CPU per warp k-step is made
// of (docs/log/2026-12-08-prefill-speed-fourth.md).
func BenchmarkPrefillDenseWinner(b *testing.B) {
	cfg := loadTest(b, "gpu.sm_count=27")
	var tile configs.TileConfig
	for _, t := range cfg.Kernel.Candidates {
		if t.Name() == "128x128x32_64x64_s5" {
			tile = t
		}
	}
	g := kernel.Shape{M: 1024, N: 2048, K: 4096, Batch: 1, Precision: tensorcore.FP16}
	p, err := kernel.New(cfg, g, tile, 1)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := Simulate(cfg, p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
