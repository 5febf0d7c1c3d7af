package sweep

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/tensorcore"
)

// Objective is what a sweep's points are ranked by for refinement: the
// sparse speedup (geometric mean over the point's workloads of the
// sparse total's speedup over dense; higher is better) when the sweep
// runs both modes, else the total time over its workloads and modes
// (lower is better). Sweeps declare no objective of their own.
type Objective struct {
	Name   string // "speedup" or "time_us"
	Higher bool   // higher is better
}

// ObjectiveOf is the plan's objective.
func ObjectiveOf(p *Plan) Objective {
	if slices.Contains(p.Modes, tensorcore.Dense) && slices.Contains(p.Modes, tensorcore.Sparse) {
		return Objective{Name: "speedup", Higher: true}
	}
	return Objective{Name: "time_us"}
}

// Scores are the objective of every point the totals hold, by config
// hash (a point missing a workload's totals has no score).
func (o Objective) Scores(totals []store.TotalRow) map[string]float64 {
	type acc struct {
		logSum, time float64
		n            int
	}
	by := map[string]*acc{}
	for _, t := range totals {
		a := by[t.ConfigHash]
		if a == nil {
			a = &acc{}
			by[t.ConfigHash] = a
		}
		a.time += t.TimeUS
		if t.Mode == tensorcore.Sparse && t.Speedup > 0 {
			a.logSum += math.Log(t.Speedup)
			a.n++
		}
	}
	out := map[string]float64{}
	for h, a := range by {
		switch {
		case o.Name == "time_us":
			out[h] = a.time
		case a.n > 0:
			out[h] = math.Exp(a.logSum / float64(a.n))
		}
	}
	return out
}

// Best is the plan's n best points by the objective, best first (ties in
// grid order); points without a score are left out.
func (o Objective) Best(p *Plan, scores map[string]float64, n int) []*Point {
	var pts []*Point
	for _, pt := range p.Points {
		if _, ok := scores[pt.Hash]; ok {
			pts = append(pts, pt)
		}
	}
	sort.SliceStable(pts, func(i, j int) bool {
		a, b := scores[pts[i].Hash], scores[pts[j].Hash]
		if o.Higher {
			return a > b
		}
		return a < b
	})
	return pts[:min(n, len(pts))]
}

// FieldRefine is CheckRefinable's n, the fast points to refine, as errors
// name it (package field).
const FieldRefine field.Name = "refine"

// CheckRefinable refuses refining n points of a plan it cannot apply to: N
// negative or above the plan's points, or a point not at
// sim.fidelity=fast (refining re-runs fast points at instruction level).
func CheckRefinable(p *Plan, n int) error {
	if n < 0 || n > len(p.Points) {
		return &field.Error{Field: FieldRefine, Value: strconv.Itoa(n),
			Err: fmt.Errorf("want 0 to the sweep's %d points", len(p.Points))}
	}
	if n == 0 {
		return nil
	}
	for _, pt := range p.Points {
		ld, err := pt.Load()
		if err != nil {
			return err
		}
		if ld.Config.Sim.Fidelity != configs.FidelityFast {
			return &field.Error{Field: FieldRefine, Value: strconv.Itoa(n),
				Err: fmt.Errorf("point %d (%s) runs at %s=%s; refining re-runs "+
					"the best points of a fast sweep (set: [%s=fast]) at instruction level",
					pt.Index+1, pt.Label(), point.FidelityKey, ld.Config.Sim.Fidelity, point.FidelityKey)}
		}
	}
	return nil
}

// Refined is the plan of pts at sim.fidelity=instruction: each the same
// config and workloads but that key, a point of its own in the store
// (its own config hash) whose grid records the fidelity, under the same
// point number. Every refined point is checked as Plan checks points.
func (p *Plan) Refined(pts []*Point, check PointCheck) (*Plan, error) {
	out := &Plan{Spec: p.Spec, Workloads: p.Workloads, Modes: p.Modes}
	for _, pt := range pts {
		q := &Point{Point: point.Point{Index: pt.Index}, spec: pt.spec, workloads: pt.workloads,
			sets: append(append([]string{}, pt.sets...), point.FidelityKey+"="+configs.FidelityInstruction)}
		q.Grid = append([]point.Assignment{}, pt.Grid...)
		if i := slices.IndexFunc(q.Grid, func(a point.Assignment) bool { return a.Key == point.FidelityKey }); i >= 0 {
			q.Grid[i].Value = configs.FidelityInstruction
		} else {
			q.Grid = append(q.Grid, point.Assignment{Key: point.FidelityKey, Value: configs.FidelityInstruction})
		}
		ld, err := q.Load()
		if err != nil {
			return nil, err
		}
		if _, q.Hash, err = configYAML(ld); err != nil {
			return nil, err
		}
		jobs, err := out.checkPoint(q, ld)
		if err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(q, ld, q.workloads, jobs); err != nil {
				return nil, err
			}
		}
		out.Points = append(out.Points, q)
	}
	return out, nil
}
