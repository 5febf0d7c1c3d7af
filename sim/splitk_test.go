package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// smallBatches are the batches at which the built-in models' small
// layers fall below one wave of output tiles and split-K is chosen.
var smallBatches = []int{1, 2, 3, 8}

// modelShapes are the distinct GEMMs of every built-in model at every
// small batch, in both modes.
func modelShapes(t *testing.T, cfg *configs.Config) []kernel.Shape {
	t.Helper()
	seen := map[kernel.Shape]bool{}
	var out []kernel.Shape
	for _, name := range workloads.Models() {
		for _, b := range smallBatches {
			tr, err := workloads.Model(name, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tr.GEMMs {
				for _, m := range tensorcore.Modes {
					s, err := shapeOf(cfg, g, m)
					if err != nil {
						t.Fatal(err)
					}
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
	for _, g := range modelShapes(t, cfg) {
		mode := g.KernelMode()
		for _, tile := range cfg.Kernel.Candidates {
			if !tile.Supports(mode, g.Precision) {
				continue
			}
			for _, sk := range []int{1, 2, 3, 4, 5, 8} {
				p, err := kernel.New(cfg, g, tile, sk)
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
func checkKCover(p *kernel.Plan) string {
	want := p.Shape.K
	if p.Shape.Sparse {
		want = p.PaddedK
	}
	covered := 0
	for s := 0; s < p.SplitK; s++ {
		// split s's first CTA (launches are split-major: CTACoord)
		c := kernel.NewCTA(p, s*p.TilesM*p.TilesN*p.Shape.Batch)
		if ctaSteps(p, s) < 1 {
			return fmt.Sprintf("split %d has no k-step", s)
		}
		for k := 0; k < ctaSteps(p, s); k++ {
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

// The built-in models run at batch 1, 2, 3 and 8, where split-K with
// uneven splits is chosen. Only the layers where kernel selection
// simulates an uneven split-K (the plans Prepare ranks hold a split whose
// factor does not divide the K-tiles) are run, in the modes where it
// does, through the selection's sample path (sim.extrapolate_waves, one
// simulated candidate): the other layers split K evenly or not at all and
// are run by other tests; this keeps the test to seconds.
func TestModelsRunAtSmallBatches(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	if testing.Short() {
		t.Skip("simulates every small-batch layer that splits K unevenly")
	}
	ld, err := configs.Load(nil, []string{"sim.extrapolate_waves=true",
		"kernel.simulated_candidates=1"})
	if err != nil {
		t.Fatal(err)
	}
	uneven, records := 0, 0
	for _, mode := range tensorcore.Modes {
		job := Job{Modes: []tensorcore.Mode{mode}, Workloads: unevenLayers(t, ld.Config, mode)}
		rep, err := Run(ld, job)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			var bm, bn, bk int
			if _, err := fmt.Sscanf(r.Kernel, "%dx%dx%d", &bm, &bn, &bk); err != nil {
				t.Fatalf("kernel name %q: %v", r.Kernel, err)
			}
			if r.SplitK > 1 && kernel.CeilDiv(r.K, bk)%r.SplitK != 0 {
				uneven++
			}
		}
		records += len(rep.Results)
	}
	t.Logf("%d records, %d with uneven split-K", records, uneven)
	if uneven == 0 {
		t.Error("no record ran an uneven split-K: the test lost its point")
	}
}

// unevenLayers are, per built-in model and small batch, the layers whose
// GEMM in mode kernel selection simulates with an uneven split-K.
func unevenLayers(t *testing.T, cfg *configs.Config, mode tensorcore.Mode) []*workloads.Trace {
	var out []*workloads.Trace
	for _, name := range workloads.Models() {
		for _, b := range smallBatches {
			tr, err := workloads.Model(name, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Prepare(cfg, Job{Modes: []tensorcore.Mode{mode}, Workloads: []*workloads.Trace{tr}})
			if err != nil {
				t.Fatal(err)
			}
			small := &workloads.Trace{Name: fmt.Sprintf("%s-b%d", name, b)}
			for _, l := range p.layers {
				if slices.ContainsFunc(p.byKey[l.shape].plans, unevenSplit) {
					small.GEMMs = append(small.GEMMs, l.gemm)
				}
			}
			if len(small.GEMMs) > 0 {
				out = append(out, small)
			}
		}
	}
	return out
}

// unevenSplit says whether the plan splits K into splits of unequal
// k-steps.
func unevenSplit(p *kernel.Plan) bool {
	return p.SplitK > 1 && kernel.CeilDiv(p.Shape.K, p.Tile.BK)%p.SplitK != 0
}

// ctaSteps is the k-steps a CTA of split runs, from the plan's public
// counts: every split's KSteps but the last's LastKSteps.
func ctaSteps(p *kernel.Plan, split int) int {
	if split == p.SplitK-1 {
		return p.LastKSteps
	}
	return p.KSteps
}
