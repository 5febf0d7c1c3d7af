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
