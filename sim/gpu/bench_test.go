package gpu

import (
	"testing"

	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// BenchmarkKernel2048 simulates one 2048^3 FP16 kernel of a fixed tile,
// dense and sparse.
func BenchmarkKernel2048(b *testing.B) {
	cfg := loadTest(b)
	for _, sparse := range []bool{false, true} {
		g := kernel.Shape{M: 2048, N: 2048, K: 2048, Batch: 1,
			Precision: tensorcore.FP16, Sparse: sparse}
		t := cfg.Kernel.Candidates[10]
		p, err := kernel.New(cfg, g, t, 1)
		if err != nil {
			b.Fatal(err)
		}
		name := "dense"
		if sparse {
			name = "sparse"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Simulate(cfg, p, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInstructionSM is the instruction-level SM's own speed: one
// 2048x2048x1024 FP16 kernel per mode on a fixed tile, reported in warp
// instructions per second.
func BenchmarkInstructionSM(b *testing.B) {
	cfg := loadTest(b)
	for _, sparse := range []bool{false, true} {
		g := kernel.Shape{M: 2048, N: 2048, K: 1024, Batch: 1,
			Precision: tensorcore.FP16, Sparse: sparse}
		p, err := kernel.New(cfg, g, cfg.Kernel.Candidates[11], 1)
		if err != nil {
			b.Fatal(err)
		}
		name := "dense"
		if sparse {
			name = "sparse"
		}
		b.Run(name, func(b *testing.B) {
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
}
