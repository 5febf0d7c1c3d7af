package sweep

import (
	"testing"

	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/tensorcore"
)

// The refinement objective: with both modes, the geometric mean over a
// point's workloads of the sparse speedup, higher first; with one mode,
// the total time over workloads, lower first; a point with no totals
// is not ranked.
func TestObjectiveRanksPoints(t *testing.T) {
	pts := []*Point{{Point: point.Point{Index: 0, Hash: "a"}}, {Point: point.Point{Index: 1, Hash: "b"}}, {Point: point.Point{Index: 2, Hash: "c"}}, {Point: point.Point{Index: 3, Hash: "d"}}}
	total := func(h, w string, m tensorcore.Mode, us, sp float64) store.TotalRow {
		return store.TotalRow{ConfigHash: h, Total: sim.Total{Workload: w, Mode: m, TimeUS: us, Speedup: sp}}
	}
	both := &Plan{Points: pts, Modes: tensorcore.Modes}
	totals := []store.TotalRow{
		total("a", "x", tensorcore.Sparse, 10, 1.2), total("a", "y", tensorcore.Sparse, 10, 1.2),
		// b: 2.0 and 1.0, geometric mean 1.41 (arithmetic 1.5).
		total("b", "x", tensorcore.Sparse, 10, 2.0), total("b", "y", tensorcore.Sparse, 10, 1.0),
		total("c", "x", tensorcore.Sparse, 10, 1.45), total("c", "y", tensorcore.Sparse, 10, 1.45),
	}
	o := ObjectiveOf(both)
	if o.Name != "speedup" || !o.Higher {
		t.Fatalf("both modes: objective %+v", o)
	}
	got := o.Best(both, o.Scores(totals), 4)
	if len(got) != 3 || got[0].Hash != "c" || got[1].Hash != "b" || got[2].Hash != "a" {
		t.Errorf("by speedup: %v, want c b a (d has no totals)", hashes(got))
	}
	dense := &Plan{Points: pts, Modes: []tensorcore.Mode{tensorcore.Dense}}
	times := []store.TotalRow{total("a", "x", tensorcore.Dense, 30, 0), total("b", "x", tensorcore.Dense, 10, 0),
		total("b", "y", tensorcore.Dense, 15, 0), total("c", "x", tensorcore.Dense, 20, 0)}
	o = ObjectiveOf(dense)
	if got := o.Best(dense, o.Scores(times), 2); o.Name != "time_us" || len(got) != 2 ||
		got[0].Hash != "c" || got[1].Hash != "b" {
		t.Errorf("by time (%s): %v, want c b", o.Name, hashes(got))
	}
}

func hashes(pts []*Point) []string {
	var out []string
	for _, p := range pts {
		out = append(out, p.Hash)
	}
	return out
}
