package selection

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// BenchmarkSuiteCandidates is where the reference suite's time goes: for
// each distinct GEMM and mode, in the order the run meets them, each
// candidate that kernel selection simulates (the pre-model's order), its
// sample run to the end (no pruning) on one core: the seconds it took and
// its estimate. It logs a line per GEMM (run with -v), then the totals:
// all samples, the winners' (what the records alone would cost), and the
// losers' within and beyond 3 % of the winner.
func BenchmarkSuiteCandidates(b *testing.B) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := ld.Config
	shapes := suiteShapes(b, cfg)
	for i := 0; i < b.N; i++ {
		var all, winners, near, far float64
		for _, s := range shapes {
			plans, _ := Candidates(cfg, s)
			sort.SliceStable(plans, func(i, j int) bool { return Estimate(cfg, plans[i]) < Estimate(cfg, plans[j]) })
			plans = plans[:min(len(plans), max(1, cfg.Kernel.SimulatedCandidates))]
			ests, secs := make([]float64, len(plans)), make([]float64, len(plans))
			line := fmt.Sprintf("%dx%dx%d sparse=%v:", s.M, s.N, s.K, s.Sparse)
			for j, p := range plans {
				start := time.Now()
				est, _, _, err := SampleEstimate(cfg, p, nil, 0, 0)
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

// suiteShapes are the reference suite's distinct GEMMs in both modes, in
// the order the run meets them, as sim builds a built-in model's rows:
// the sparse mode prunes the weights with the precision's configured
// pattern, in the row's layout. A row the built-in models do not have (a
// weight file, sparse activations, another pattern) stops the benchmark.
func suiteShapes(b *testing.B, cfg *configs.Config) []kernel.Shape {
	if cfg.TensorCore.DualSide {
		b.Fatal("the suite's shapes are built without dual-side work")
	}
	seen := map[kernel.Shape]bool{}
	var shapes []kernel.Shape
	for _, m := range []string{"resnet50", "bert-large"} {
		tr, err := workloads.Model(m, 32, 128)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range tr.GEMMs {
			if g.Weights != "" || g.SparseOperand == workloads.OperandActivations ||
				g.Sparsity != workloads.Dense && g.Sparsity != workloads.SparsityFor(g.Precision) {
				b.Fatalf("%s: a row the suite's shapes do not build", g.Name)
			}
			lay, err := kernel.ParseLayout(g.Layout)
			if err != nil {
				b.Fatal(err)
			}
			prec, err := cfg.TensorCore.Get(g.Precision)
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range tensorcore.Modes {
				s := kernel.Shape{M: g.M, N: g.N, K: g.K, Batch: max(1, g.Batch), Precision: g.Precision,
					Layout: lay, Sparse: mode == tensorcore.Sparse && g.Sparsity != workloads.Dense}
				if s.Sparse {
					s.Pattern = prec.Pattern()
				}
				if !seen[s] {
					seen[s] = true
					shapes = append(shapes, s)
				}
			}
		}
	}
	return shapes
}
