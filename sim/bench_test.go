package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/workloads"

	"github.com/stcsim/stcsim/tensorcore"
)

func loadTest(tb testing.TB, sets ...string) *configs.Config {
	tb.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		tb.Fatal(err)
	}
	return ld.Config
}

// BenchmarkKernel2048 simulates one 2048^3 FP16 kernel of a fixed tile,
// dense and sparse.
func BenchmarkKernel2048(b *testing.B) {
	cfg := loadTest(b)
	for _, sparse := range []bool{false, true} {
		g := gemmShape{M: 2048, N: 2048, K: 2048, Batch: 1,
			Precision: tensorcore.FP16, Sparse: sparse}
		t := cfg.Kernel.Candidates[10]
		p, err := planKernel(cfg, g, t, 1)
		if err != nil {
			b.Fatal(err)
		}
		name := "dense"
		if sparse {
			name = "sparse"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := simulateKernel(cfg, p, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReferenceSuite is the speed target of the SM issue: ResNet-50
// at batch 32 and BERT-Large at sequence 128, batch 32, dense and sparse,
// on a100-40gb in the default fidelity. scripts/bench-suite.sh runs the
// same job through the command and also reports peak RSS.
func BenchmarkReferenceSuite(b *testing.B) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var job Job
	for _, m := range []string{"resnet50", "bert-large"} {
		t, err := workloads.Model(m, 32, 128)
		if err != nil {
			b.Fatal(err)
		}
		job.Workloads = append(job.Workloads, t)
	}
	job.Modes = tensorcore.Modes
	for i := 0; i < b.N; i++ {
		if _, err := Run(ld, job); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstructionSM is the instruction-level SM's own speed: one
// 2048x2048x1024 FP16 kernel per mode on a fixed tile, reported in warp
// instructions per second.
func BenchmarkInstructionSM(b *testing.B) {
	cfg := loadTest(b)
	for _, sparse := range []bool{false, true} {
		g := gemmShape{M: 2048, N: 2048, K: 1024, Batch: 1,
			Precision: tensorcore.FP16, Sparse: sparse}
		p, err := planKernel(cfg, g, cfg.Kernel.Candidates[11], 1)
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
				gp, err := buildGPU(cfg, p)
				if err != nil {
					b.Fatal(err)
				}
				if err := gp.run(); err != nil {
					b.Fatal(err)
				}
				instrs += gp.issued
			}
			b.ReportMetric(float64(instrs)/b.Elapsed().Seconds(), "warp-instr/s")
		})
	}
}
