package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
)

// Metrics are the quantities a sweep plot can show, with their axis
// labels.
var Metrics = map[string]string{
	"speedup":   "sparse speedup over dense (x)",
	"time_us":   "time per pass (µs)",
	"tflops":    "achieved throughput (TFLOPS)",
	"dram_gbps": "DRAM bandwidth (GB/s)",
	// Power and energy (docs/power.md).
	"energy_uj":     "energy per pass (µJ)",
	"avg_power_w":   "average board power (W)",
	"energy_saving": "sparse energy saving over dense (x)",
	"clock_mhz":     "time-weighted SM clock (MHz)",
	// Cost (docs/area.md).
	"area_mm2":       "GPU area (mm²)",
	"tflops_per_mm2": "throughput per area (TFLOPS/mm²)",
	"tflops_per_w":   "throughput per watt (TFLOPS/W)",
	"energy_delay":   "energy-delay product per pass (pJ·s)",
}

// metricNames lists Metrics for messages.
const metricNames = "speedup, time_us, tflops, dram_gbps, energy_uj, " +
	"avg_power_w, energy_saving, clock_mhz, area_mm2, tflops_per_mm2, " +
	"tflops_per_w or energy_delay"

// Query selects what a sweep plot shows: metric Y against grid key X, one
// line per workload or per layer (and per mode, except for speedup, and
// per value of any other varied key), over the points matching Where.
type Query struct {
	X, Y, By string
	Where    []point.Assignment
}

// The fields of Query that errors name (package field).
const (
	FieldX     field.Name = "x"
	FieldY     field.Name = "y"
	FieldBy    field.Name = "by"
	FieldWhere field.Name = "where"
)

// byError refuses a Query.By that is neither workload nor layer.
func byError(by string) error {
	return &field.Error{Field: FieldBy, Value: quote.Q(by), Err: errors.New("want workload or layer")}
}

// whereError refuses a Query.Where key that no stored point varies.
func whereError(key string, keys []string) error {
	return &field.Error{Field: FieldWhere, Value: quote.Key(key),
		Err: fmt.Errorf("no stored point varies that key (varied keys: %s)", strings.Join(keys, ", "))}
}

// metricError refuses a metric of Query (f, FieldX or FieldY) that is not one.
func metricError(f field.Name, m string) error {
	return &field.Error{Field: f, Value: quote.Q(m), Err: fmt.Errorf("want %s", metricNames)}
}

// Series extracts the lines of a sweep plot from a store's rows; X values
// are ordered numerically where they are numbers.
func Series(rows []Row, q Query) ([]results.Series, error) {
	if _, ok := Metrics[q.Y]; !ok {
		return nil, metricError(FieldY, q.Y)
	}
	if q.By != "workload" && q.By != "layer" {
		return nil, byError(q.By)
	}
	keys := gridKeys(rows)
	if !contains(keys, q.X) {
		return nil, &field.Error{Field: FieldX, Value: quote.Key(q.X),
			Err: fmt.Errorf("no stored point varies that key (varied keys: %s)", strings.Join(keys, ", "))}
	}
	for _, w := range q.Where {
		if !contains(keys, w.Key) {
			return nil, whereError(w.Key, keys)
		}
	}
	acc := newAccumulator(q)
	var sel []Row
	for _, r := range rows {
		if acc.selected(r) {
			sel = append(sel, r)
		}
	}
	labelKeys := freeKeys(sel, keys, q.X)
	for _, r := range sel {
		acc.add(r, labelKeys)
	}
	return acc.series()
}

// freeKeys are the grid keys that still vary once X is fixed: each line of
// the plot is one combination of their values. Keys constant over the
// selection, and keys zipped with X (one value per X value), are left out.
func freeKeys(rows []Row, keys []string, x string) []string {
	var out []string
	for _, k := range keys {
		if k == x {
			continue
		}
		perX := map[string]string{}
		free := false
		for _, r := range rows {
			xv, _ := point.GridValue(r.Grid, x)
			kv, _ := point.GridValue(r.Grid, k)
			if v, ok := perX[xv]; ok && v != kv {
				free = true
				break
			}
			perX[xv] = kv
		}
		if free {
			out = append(out, k)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sums gathers one plotted point: the sums behind its metric.
type sums struct {
	timeUS, flops, dramBytes float64
	// energyUJ is energy x count; denseUJ the dense energy of the sparse
	// layers in it (their saving times their energy); clockUS is clock x
	// time, for the time-weighted clock.
	energyUJ, denseUJ, clockUS float64
	// denseUS is the dense time of the sparse layers summed in timeUS
	// (their speedup times their time), for the speedup metric.
	denseUS float64
	// areaMM2 is the point's GPU area (one config: one area).
	areaMM2 float64
	config  string
}

type lineKey struct{ label, x string }

type accumulator struct {
	q      Query
	points map[lineKey]*sums
	labels []string
	seen   map[string]bool
}

func newAccumulator(q Query) *accumulator {
	return &accumulator{q: q, points: map[lineKey]*sums{},
		seen: map[string]bool{}}
}

func (a *accumulator) selected(r Row) bool {
	if _, ok := point.GridValue(r.Grid, a.q.X); !ok {
		return false
	}
	for _, w := range a.q.Where {
		if v, _ := point.GridValue(r.Grid, w.Key); v != w.Value {
			return false
		}
	}
	if a.q.Y == "speedup" {
		return r.Mode == tensorcore.Sparse && r.Speedup > 0
	}
	if a.q.Y == "energy_saving" {
		return r.Mode == tensorcore.Sparse && r.EnergySaving > 0
	}
	return true
}

// label names the line a row belongs to; keys are the grid keys that
// distinguish lines.
func (a *accumulator) label(r Row, keys []string) string {
	parts := []string{point.WorkloadBase(r.Workload, r.Grid)}
	if a.q.By == "layer" {
		parts[0] += " " + r.Layer
	}
	if a.q.Y != "speedup" && a.q.Y != "energy_saving" {
		parts = append(parts, r.Mode.String())
	}
	for _, k := range keys {
		v, ok := point.GridValue(r.Grid, k)
		if !ok && k == point.FidelityKey {
			v = r.Fidelity // a fast point beside its refined copy (--refine)
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}

func (a *accumulator) add(r Row, keys []string) {
	x, _ := point.GridValue(r.Grid, a.q.X)
	lk := lineKey{a.label(r, keys), x}
	s := a.points[lk]
	if s == nil {
		s = &sums{config: r.ConfigHash}
		a.points[lk] = s
		if !a.seen[lk.label] {
			a.seen[lk.label] = true
			a.labels = append(a.labels, lk.label)
		}
	}
	if s.config != r.ConfigHash {
		s.config = "ambiguous" // two configs at one X on one line
	}
	s.addRow(r)
}

// addRow adds one record (times its count) to the sums.
func (s *sums) addRow(r Row) {
	c := float64(r.Count)
	t := r.TimeUS * c
	s.timeUS += t
	s.flops += r.FLOPs() * c
	s.dramBytes += float64(r.DRAMReadBytes+r.DRAMWriteBytes) * c
	if r.Speedup > 0 {
		s.denseUS += t * r.Speedup
	}
	e := r.EnergyUJ * c
	s.energyUJ += e
	s.denseUJ += e * r.EnergySaving
	s.clockUS += float64(r.ClockMHz) * t
	s.areaMM2 = r.AreaMM2
}

func (s *sums) value(metric string) float64 {
	switch metric {
	case "speedup":
		return s.denseUS / s.timeUS
	case "time_us":
		return s.timeUS
	case "tflops":
		return s.flops / s.timeUS / 1e6
	case "energy_uj":
		return s.energyUJ
	case "avg_power_w":
		return s.energyUJ / s.timeUS
	case "energy_saving":
		return s.denseUJ / s.energyUJ
	case "clock_mhz":
		return s.clockUS / s.timeUS
	case "area_mm2":
		return s.areaMM2
	case "tflops_per_mm2":
		return s.flops / s.timeUS / 1e6 / s.areaMM2
	case "tflops_per_w":
		return s.flops / s.energyUJ / 1e6
	case "energy_delay":
		return s.energyUJ * s.timeUS
	}
	return s.dramBytes / s.timeUS / 1e3
}

func (a *accumulator) series() ([]results.Series, error) {
	var out []results.Series
	for _, l := range a.labels {
		var xs []string
		for k := range a.points {
			if k.label == l {
				xs = append(xs, k.x)
			}
		}
		sort.Slice(xs, func(i, j int) bool { return CompareValues(xs[i], xs[j]) < 0 })
		s := results.Series{Label: l}
		for _, x := range xs {
			p := a.points[lineKey{l, x}]
			if p.config == "ambiguous" {
				return nil, field.Errorf("line %q at %s=%s mixes several "+
					"configs with the same grid values; narrow it with "+
					"%s", l, a.q.X, x, FieldWhere)
			}
			s.X = append(s.X, x)
			s.Y = append(s.Y, p.value(a.q.Y))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no stored results match")
	}
	return out, nil
}
