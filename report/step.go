package report

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// stepPasses are a training step's parts in the order a step runs them,
// with the names the step summary and plot give them (the records' Pass;
// overhead is the activation sparsifier).
var stepPasses = []struct{ pass, name string }{
	{"overhead", "activation sparsifier"},
	{"forward", "forward (Y = W X)"},
	{"dgrad", "data gradient (dX = W^T dY)"},
	{"wgrad", "weight gradient (dW = dY X^T)"},
}

// stepLine is one GEMM (or overhead kernel) of a step, both modes.
type stepLine struct {
	layer, pass, along, bound string
	dense, sparse             float64 // µs per step: time x count; -1 when not run
}

// stepLines pairs a workload's training records by layer, in record
// order; nil when the workload has none (an inference run).
func stepLines(rows []results.LayerResult) []*stepLine {
	var out []*stepLine
	at := map[string]*stepLine{}
	for _, r := range rows {
		if r.Pass == "" {
			continue
		}
		l := at[r.Layer]
		if l == nil {
			l = &stepLine{layer: r.Layer, pass: r.Pass, dense: -1, sparse: -1}
			at[r.Layer] = l
			out = append(out, l)
		}
		t := r.TimeUS * float64(r.Count)
		if r.Mode == tensorcore.Dense {
			l.dense = t
			continue
		}
		l.sparse, l.bound = t, r.Bound
		if r.SparseApplied {
			l.along = r.SparseAlong
		}
	}
	return out
}

// passTotals sums a step's lines by pass (µs per step, each mode).
func passTotals(lines []*stepLine) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, l := range lines {
		s := out[l.pass]
		s[0] += max(l.dense, 0)
		s[1] += max(l.sparse, 0)
		out[l.pass] = s
	}
	return out
}

// writeStep writes each training workload's step summary: every GEMM's
// time per step dense and sparse, its speedup, the operand and dimension
// that is N:M in its sparse run and what limits that run; the
// sparsifier kernels in their own rows; then the step by pass.
func writeStep(out io.Writer, rep *results.Report) {
	for _, w := range workloadsOf(rep) {
		var b bytes.Buffer
		if writeStepOf(&b, w, resultsOf(rep, w)) {
			fmt.Fprintf(out, "\n%s", b.Bytes())
		}
	}
}

// writeStepOf writes one workload's step summary; false when its
// records are no training step's.
func writeStepOf(out io.Writer, w string, rows []results.LayerResult) bool {
	lines := stepLines(rows)
	if len(lines) == 0 {
		return false
	}
	fmt.Fprintf(out, "training step of %s (µs per step: µs/call x count)\n", w)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "layer\tpass\tN:M operand (sparse run)\tdense µs\tsparse µs\tspeedup\tsparse limiter\n")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.layer, l.pass, dash(l.along),
			stepCell(l.dense), stepCell(l.sparse), ratioCell(l.dense, l.sparse), dash(l.bound))
	}
	tw.Flush()
	tot := passTotals(lines)
	var dense, sparse float64
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "by pass\tdense µs\tsparse µs\tspeedup\tshare of sparse step\n")
	for _, p := range stepPasses {
		s, ok := tot[p.pass]
		if !ok {
			continue
		}
		dense, sparse = dense+s[0], sparse+s[1]
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%s\t%s\n", p.name, s[0], s[1],
			ratioCell(s[0], s[1]), shareCell(s[1], passSum(tot, 1)))
	}
	fmt.Fprintf(tw, "step\t%.1f\t%.1f\t%s\t\n", dense, sparse, ratioCell(dense, sparse))
	tw.Flush()
	return true
}

func passSum(tot map[string][2]float64, mode int) float64 {
	s := 0.0
	for _, v := range tot {
		s += v[mode]
	}
	return s
}

func stepCell(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func ratioCell(dense, sparse float64) string {
	if dense <= 0 || sparse <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", dense/sparse)
}

func shareCell(v, total float64) string {
	if total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*v/total)
}

// stepPlot stacks a training step's time by pass, dense against sparse:
// where a step's time goes (nil for an inference run or one mode).
func stepPlot(w string, rows []results.LayerResult) (*figure, error) {
	tot := passTotals(stepLines(rows))
	if len(tot) == 0 || passSum(tot, 0) <= 0 || passSum(tot, 1) <= 0 {
		return nil, nil
	}
	p := newPlot(w+": where a training step's time goes", "", "time per step (µs)")
	p.NominalX("dense", "sparse")
	var below *plotter.BarChart
	var stack []*plotter.BarChart
	var names []string
	for i, ps := range stepPasses {
		s, ok := tot[ps.pass]
		if !ok {
			continue
		}
		bars, err := addStacked(p, plotter.Values{s[0], s[1]}, vg.Points(60), i, below)
		if err != nil {
			return nil, err
		}
		below = bars
		stack = append(stack, bars)
		names = append(names, fmt.Sprintf("%s: %.0f -> %.0f µs", ps.name, s[0], s[1]))
	}
	for i := len(stack) - 1; i >= 0; i-- {
		p.Legend.Add(names[i], stack[i])
	}
	p.Y.Min = 0
	p.Y.Max = max(passSum(tot, 0), passSum(tot, 1)) * 1.05
	return &figure{p: p, w: 4 * vg.Inch, h: 5 * vg.Inch,
		key: []string{"", fmt.Sprintf("step speedup %.2fx", passSum(tot, 0)/passSum(tot, 1))}}, nil
}
