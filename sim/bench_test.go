package sim

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
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
				if _, err := gpu.Simulate(cfg, p, gpu.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReferenceSuite is the speed target of the SM issue: ResNet-50
// at batch 32 and BERT-Large at sequence 128, batch 32, dense and sparse,
// on a100-40gb in the default fidelity. Besides the time it reports the
// warp instructions simulated per run (warp-instr/op), which does not
// depend on the machine: compare changes to the selection by it. scripts/bench-suite.sh runs the
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
	start := gpu.InstructionsSimulated.Load()
	for i := 0; i < b.N; i++ {
		if _, err := Run(ld, job); err != nil {
			b.Fatal(err)
		}
	}
	// The work itself, which timing on a shared machine blurs: every warp
	// instruction simulated, selection samples included.
	b.ReportMetric(float64(gpu.InstructionsSimulated.Load()-start)/float64(b.N), "warp-instr/op")
}

// BenchmarkSuiteCandidates is where the reference suite's time goes: for
// each distinct GEMM and mode, in the order the run meets them, each
// candidate that kernel selection simulates (the pre-model's order), its
// sample run to the end (no pruning) on one core: the seconds it took and
// its estimate. It logs a line per GEMM (run with -v), then the totals:
// all samples, the winners' (what the records alone would cost), and the
// losers' within and beyond 3 % of the winner.
func BenchmarkSuiteCandidates(b *testing.B) {
	cfg := loadTest(b)
	seen := map[kernel.Shape]bool{}
	var shapes []kernel.Shape
	for _, m := range []string{"resnet50", "bert-large"} {
		tr, err := workloads.Model(m, 32, 128)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range tr.GEMMs {
			for _, mode := range tensorcore.Modes {
				s, err := shapeOf(cfg, g, mode)
				if err != nil {
					b.Fatal(err)
				}
				if !seen[s] {
					seen[s] = true
					shapes = append(shapes, s)
				}
			}
		}
	}
	for i := 0; i < b.N; i++ {
		var all, winners, near, far float64
		for _, s := range shapes {
			plans, _ := selection.Candidates(cfg, s)
			sort.SliceStable(plans, func(i, j int) bool { return selection.Estimate(cfg, plans[i]) < selection.Estimate(cfg, plans[j]) })
			plans = plans[:min(len(plans), max(1, cfg.Kernel.SimulatedCandidates))]
			ests, secs := make([]float64, len(plans)), make([]float64, len(plans))
			line := fmt.Sprintf("%dx%dx%d sparse=%v:", s.M, s.N, s.K, s.Sparse)
			for j, p := range plans {
				start := time.Now()
				est, _, _, err := selection.SampleEstimate(cfg, p, nil, 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				ests[j], secs[j] = est, time.Since(start).Seconds()
				line += fmt.Sprintf(" %s (%d CTAs, %d per SM, %d k-steps) %.0f cycles in %.1f s;",
					p.Name(), p.CTAs, p.Occupancy, p.KSteps, est, secs[j])
			}
			best := 0
			for j := range ests {
				if ests[j] < ests[best] {
					best = j
				}
			}
			for j := range ests {
				all += secs[j]
				switch {
				case j == best:
					winners += secs[j]
				case ests[j] <= 1.03*ests[best]:
					near += secs[j]
				default:
					far += secs[j]
				}
			}
			b.Log(line)
		}
		b.Logf("samples %.1f s: winners %.1f s, losers within 3 %% %.1f s, beyond %.1f s",
			all, winners, near, far)
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
				gp, err := gpu.Build(cfg, p)
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
