package store

import (
	"fmt"
	"strings"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
)

// Scatter is a plot of metric q.Y against metric q.X: one point per
// stored point (its grid values) and workload or layer (q.By; and mode,
// except when a metric is the sparse-only speedup or energy_saving), each
// metric summed over the point's rows as Series sums a line's point.
// Points are labelled by the grid values that tell them apart.
func Scatter(rows []Row, q Query) ([]results.ScatterPoint, error) {
	for _, m := range []struct {
		f field.Name
		v string
	}{{FieldX, q.X}, {FieldY, q.Y}} {
		if _, ok := Metrics[m.v]; !ok {
			return nil, metricError(m.f, m.v)
		}
	}
	if q.By != "workload" && q.By != "layer" {
		return nil, byError(q.By)
	}
	keys := gridKeys(rows)
	for _, w := range q.Where {
		if !contains(keys, w.Key) {
			return nil, whereError(w.Key, keys)
		}
	}
	sparse := sparseMetric(q.X) || sparseMetric(q.Y)
	var sel []Row
	for _, r := range rows {
		if !matches(r, q.Where) {
			continue
		}
		if sparse && !hasSparseMetrics(r, q) {
			continue
		}
		sel = append(sel, r)
	}
	free := varyingKeys(sel, keys)
	type key struct{ group, point string }
	points := map[key]*sums{}
	var order []key
	for _, r := range sel {
		g := r.Workload
		if q.By == "layer" {
			g += " " + r.Layer
		}
		if !sparse {
			g += ", " + r.Mode.String()
		}
		k := key{g, pointLabel(r, free)}
		s := points[k]
		if s == nil {
			s = &sums{config: r.ConfigHash}
			points[k] = s
			order = append(order, k)
		}
		if s.config != r.ConfigHash {
			return nil, field.Errorf("point %q of %s mixes several configs with "+
				"the same grid values; narrow it with %s", k.point, k.group, FieldWhere)
		}
		s.addRow(r)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no stored results match")
	}
	out := make([]results.ScatterPoint, len(order))
	for i, k := range order {
		s := points[k]
		out[i] = results.ScatterPoint{Group: k.group, Label: k.point, X: s.value(q.X), Y: s.value(q.Y)}
	}
	return out, nil
}

// IsMetric says whether a --x names a metric (a scatter) rather than a
// grid key (lines).
func IsMetric(name string) bool { _, ok := Metrics[name]; return ok }

// hasSparseMetrics: a sparse record with the sparse-only metrics q uses.
func hasSparseMetrics(r Row, q Query) bool {
	uses := func(m string) bool { return q.X == m || q.Y == m }
	return r.Mode == tensorcore.Sparse && (!uses("speedup") || r.Speedup > 0) &&
		(!uses("energy_saving") || r.EnergySaving > 0)
}

// sparseMetric: the metric exists on sparse records only.
func sparseMetric(m string) bool { return m == "speedup" || m == "energy_saving" }

func matches(r Row, where []point.Assignment) bool {
	for _, w := range where {
		if v, _ := point.GridValue(r.Grid, w.Key); v != w.Value {
			return false
		}
	}
	return true
}

// varyingKeys are the grid keys with more than one value over rows.
func varyingKeys(rows []Row, keys []string) []string {
	var out []string
	for _, k := range keys {
		seen := map[string]bool{}
		for _, r := range rows {
			v, _ := point.GridValue(r.Grid, k)
			seen[v] = true
		}
		if len(seen) > 1 {
			out = append(out, k)
		}
	}
	return out
}

// pointLabel names a stored point by the grid values that vary; keys of
// several precisions set to one value are named once, with * for the
// precision (tensorcore.*.b_operand_bytes_per_clk=64).
func pointLabel(r Row, keys []string) string {
	var parts []string
	seen := map[string]int{}
	for _, k := range keys {
		v, _ := point.GridValue(r.Grid, k)
		name := k
		if f := strings.Split(k, "."); len(f) == 3 && f[0] == "tensorcore" {
			if _, err := tensorcore.ParsePrecision(f[1]); err == nil {
				name = "tensorcore.*." + f[2]
			}
		}
		part := name + "=" + v
		if i, ok := seen[part]; ok && name != k {
			parts[i] = part
			continue
		}
		seen[part] = len(parts)
		if name != k {
			part = k + "=" + v
			seen[name+"="+v] = len(parts)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "the only point"
	}
	return strings.Join(parts, ", ")
}
