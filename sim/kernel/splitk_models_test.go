package kernel

import (
	"fmt"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// smallBatches are the batches at which the built-in models' small
// layers fall below one wave of output tiles and split-K is chosen.
var smallBatches = []int{1, 2, 3, 8}

// modelShapes are the distinct GEMMs of every built-in model at every
// small batch, in both modes, as sim runs a built-in model's rows (the
// sparse mode prunes the weights; New gives a sparse shape without a
// pattern the configured one). A row the built-in models do not have (a
// weight file, sparse activations, another pattern) stops the test.
func modelShapes(t *testing.T) []Shape {
	t.Helper()
	seen := map[Shape]bool{}
	var out []Shape
	for _, name := range workloads.Models() {
		for _, b := range smallBatches {
			tr, err := workloads.Model(name, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tr.GEMMs {
				if g.Weights != "" || g.SparseOperand == workloads.OperandActivations ||
					g.Sparsity != workloads.Dense && g.Sparsity != workloads.SparsityFor(g.Precision) {
					t.Fatalf("%s %s: a row modelShapes does not build", name, g.Name)
				}
				lay, err := ParseLayout(g.Layout)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range tensorcore.Modes {
					s := Shape{M: g.M, N: g.N, K: g.K, Batch: max(1, g.Batch), Precision: g.Precision,
						Layout: lay, Sparse: m == tensorcore.Sparse && g.Sparsity != workloads.Dense}
					if !seen[s] {
						seen[s] = true
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// Every split of every plan must run at least one k-step, every k-step
// must load a non-empty tile of A and of B (an empty stage never lands,
// which deadlocked the kernel), and the splits' k-steps together must
// cover K exactly once: the reference is K itself (padded for sparse).
// Checked for every candidate tile and split factors 2-8 on every
// built-in model's GEMMs at batch 1, 2, 3 and 8.
func TestSplitKCoversKOnce(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	plans := 0
	for _, g := range modelShapes(t) {
		mode := g.KernelMode()
		for _, tile := range cfg.Kernel.Candidates {
			if !tile.Supports(mode, g.Precision) {
				continue
			}
			for _, sk := range []int{1, 2, 3, 4, 5, 8} {
				p, err := New(cfg, g, tile, sk)
				if err != nil {
					continue
				}
				plans++
				if msg := checkKCover(p); msg != "" {
					t.Fatalf("%s: %s", p.Describe(), msg)
				}
			}
		}
	}
	if plans == 0 {
		t.Fatal("no plans checked")
	}
}

// checkKCover walks the K range each split's k-steps load.
func checkKCover(p *Plan) string {
	want := p.Shape.K
	if p.Shape.Sparse {
		want = p.PaddedK
	}
	covered := 0
	for s := 0; s < p.SplitK; s++ {
		// split s's first CTA (launches are split-major: CTACoord)
		c := NewCTA(p, s*p.TilesM*p.TilesN*p.Shape.Batch)
		if p.stepsOf(s) < 1 {
			return fmt.Sprintf("split %d has no k-step", s)
		}
		for k := 0; k < p.stepsOf(s); k++ {
			regs := c.StageRegions(k)
			a, b := regs[0].Region, regs[len(regs)-1].Region
			if a.RowBytes == 0 || b.RowBytes == 0 {
				return fmt.Sprintf("split %d k-step %d loads nothing", s, k)
			}
			covered += b.RowBytes / p.ElemBytes
		}
	}
	if covered != want {
		return fmt.Sprintf("splits cover K %d, want %d", covered, want)
	}
	return ""
}
