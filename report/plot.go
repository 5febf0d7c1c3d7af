package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// plotFormats are written for every plot: PNG to look at, SVG to print.
var plotFormats = []string{"png", "svg"}

// WritePlots draws the run's plots into dir, per workload: the per-layer
// dense-vs-sparse speedup with the network total, the time breakdown per
// layer in each mode (one time scale for both), a roofline with the
// config's roofs and numbered layers, and the energy by class and by
// layer (workloadPlots). It returns the file names written, relative to
// dir, PNG before SVG.
func WritePlots(dir string, rep *results.Report, cfg *configs.Config) ([]string, error) {
	var files []string
	stems := plotStems(rep)
	for _, w := range workloadsOf(rep) {
		rows := resultsOf(rep, w)
		base := stems[w]
		on := plotOf{w: w, rows: rows, rep: rep, cfg: cfg, top: breakdownTop(rows)}
		for _, k := range workloadPlots {
			name := base + "-" + k.suffix
			if strings.HasPrefix(k.suffix, "breakdown") && allFast(rows) {
				continue // the fast tier makes no breakdown
			}
			fig, err := k.draw(on)
			if err != nil {
				return files, fmt.Errorf("plot %s: %w", name, err)
			}
			if fig == nil {
				continue // nothing to show (e.g. a dense-only run)
			}
			fig.p.Title.Text += tierLabel(rows)
			out, err := savePlot(fig, dir, name)
			if err != nil {
				return files, err
			}
			files = append(files, out...)
		}
	}
	return files, nil
}

// tierLabel marks a figure with fast-tier records in it (sim.fidelity:
// fast), so that no one reads it as the instruction-level SM's.
func tierLabel(rows []results.LayerResult) string {
	for _, r := range rows {
		if r.Fidelity == configs.FidelityFast {
			return " (fast tier)"
		}
	}
	return ""
}

func allFast(rows []results.LayerResult) bool {
	for _, r := range rows {
		if r.Fidelity != configs.FidelityFast {
			return false
		}
	}
	return len(rows) > 0
}

// savePlot writes the figure as PNG and SVG, atomically, and returns the
// names.
func savePlot(fig *figure, dir, name string) ([]string, error) {
	var names []string
	for _, f := range plotFormats {
		data, err := fig.render(f)
		if err != nil {
			return names, fmt.Errorf("plot %s: %w", name, err)
		}
		file := name + "." + f
		if err := WriteAtomic(filepath.Join(dir, file), data); err != nil {
			return names, err
		}
		names = append(names, file)
	}
	return names, nil
}

// plotOf is what a workload's plots are drawn from.
type plotOf struct {
	w    string
	rows []results.LayerResult
	rep  *results.Report
	cfg  *configs.Config
	top  float64 // the breakdown plots' shared time scale
}

// workloadPlots are the plots WritePlots draws per workload, in order:
// each file is the workload's stem, "-", the suffix; inReport marks those
// that report.md embeds (all of them). A draw that returns a nil
// figure has nothing to show (e.g. a dense-only run) and writes no file.
var workloadPlots = []struct {
	suffix   string
	inReport bool
	draw     func(plotOf) (*figure, error)
}{
	{"speedup", true, func(o plotOf) (*figure, error) {
		return speedupPlot(o.w, o.rows, totalOf(o.rep, o.w))
	}},
	{"breakdown-dense", true, func(o plotOf) (*figure, error) {
		return breakdownPlot(o.w, o.rows, tensorcore.Dense, o.top)
	}},
	{"breakdown-sparse", true, func(o plotOf) (*figure, error) {
		return breakdownPlot(o.w, o.rows, tensorcore.Sparse, o.top)
	}},
	{"roofline", true, func(o plotOf) (*figure, error) {
		return rooflinePlot(o.w, o.rows, o.cfg)
	}},
	{"step", true, func(o plotOf) (*figure, error) {
		return stepPlot(o.w, o.rows)
	}},
	{"energy-breakdown", true, func(o plotOf) (*figure, error) {
		return asFigure(energyBreakdownPlot(o.w, o.rep))
	}},
	{"energy-layers", true, func(o plotOf) (*figure, error) {
		return asFigure(energyLayerPlot(o.w, o.rows))
	}},
}

// inReport reports whether report.md embeds the plot of this suffix.
func inReport(suffix string) bool {
	for _, k := range workloadPlots {
		if k.suffix == suffix {
			return k.inReport
		}
	}
	return false
}

// plotStems maps each workload to the stem of its plot files: its
// file-safe name, with -2, -3, ... after it when an earlier workload's
// name maps to the same stem (a/b and a_b), so no plot overwrites another.
func plotStems(rep *results.Report) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	for _, w := range workloadsOf(rep) {
		stem := fileSafe(w)
		s := stem
		for i := 2; used[strings.ToLower(s)]; i++ {
			s = fmt.Sprintf("%s-%d", stem, i)
		}
		used[strings.ToLower(s)] = true
		out[w] = s
	}
	return out
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileSafe turns a workload name into a file-name stem.
func fileSafe(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if s == "" || s[0] == '.' {
		s = "w" + s
	}
	return s
}

func workloadsOf(rep *results.Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rep.Results {
		if !seen[r.Workload] {
			seen[r.Workload] = true
			out = append(out, r.Workload)
		}
	}
	return out
}

func resultsOf(rep *results.Report, workload string) []results.LayerResult {
	var out []results.LayerResult
	for _, r := range rep.Results {
		if r.Workload == workload {
			out = append(out, r)
		}
	}
	return out
}

func totalOf(rep *results.Report, workload string) *results.Total {
	for i, t := range rep.Totals {
		if t.Workload == workload && t.Mode == tensorcore.Sparse && t.Speedup > 0 {
			return &rep.Totals[i]
		}
	}
	return nil
}

// newPlot makes a plot with the house style: title, axis labels and
// readable type sizes.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Y.Tick.Marker = niceTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// niceTicks labels about six round values (1, 2, 2.5 or 5 times a power
// of ten apart); gonum's default often labels only two.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		r := math.Round(v/step) * step // no 0.30000000000000004
		out = append(out, plot.Tick{Value: r,
			Label: strconv.FormatFloat(r, 'g', 6, 64)})
	}
	return out
}

// layerAxis names the bars along X; long lists are rotated so they stay
// readable. It returns a size that gives every bar and label room.
func layerAxis(p *plot.Plot, names []string) (w, h vg.Length) {
	p.NominalX(names...)
	w = max(vg.Length(len(names))*0.22*vg.Inch+2*vg.Inch, 7*vg.Inch)
	h = 4.5 * vg.Inch
	if len(names) > 6 {
		p.X.Tick.Label.Rotation = math.Pi / 3
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
		longest := vg.Length(0)
		for _, n := range names {
			longest = max(longest, p.X.Tick.Label.Width(n))
		}
		h += longest * 0.87 // sin 60°: the rotated labels' height
	}
	return w, h
}

// layerName labels a layer, with its repeat count.
func layerName(r results.LayerResult) string {
	if r.Count > 1 {
		return fmt.Sprintf("%s x%d", r.Layer, r.Count)
	}
	return r.Layer
}

// speedupPlot: one bar per layer (sparse over dense time) and the network
// total, against the 1x line.
func speedupPlot(w string, rows []results.LayerResult, total *results.Total) (*figure, error) {
	var names []string
	var vals plotter.Values
	for _, r := range rows {
		if r.Mode == tensorcore.Sparse && r.Speedup > 0 {
			names = append(names, layerName(r))
			vals = append(vals, r.Speedup)
		}
	}
	if len(vals) == 0 || total == nil {
		return nil, nil
	}
	p := newPlot(w+": 2:4-sparse speedup over dense, per layer",
		"layer", WithPrecision("speedup (dense time / sparse time, x)", rows))
	width, height := layerAxis(p, append(names, "network total"))
	barW := 0.6 * (width - 1.5*vg.Inch) / vg.Length(len(names)+1)
	bars, err := plotter.NewBarChart(append(vals, 0), barW)
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	tot := make(plotter.Values, len(vals)+1)
	tot[len(vals)] = total.Speedup
	totBar, err := plotter.NewBarChart(tot, barW)
	if err != nil {
		return nil, err
	}
	totBar.Color = plotutil.Color(1)
	totBar.LineStyle.Width = 0
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1},
		{X: float64(len(vals)) + 0.5, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 60}
	p.Add(bars, totBar, one)
	p.Legend.Add("layer", bars)
	p.Legend.Add(fmt.Sprintf("network total (%.2fx)", total.Speedup), totBar)
	p.Legend.Add("1x (no gain)", one)
	p.Y.Min = 0
	p.Y.Max = max(maxOf(vals), total.Speedup, 1) * 1.08
	return &figure{p: p, w: width, h: height}, nil
}

func maxOf(v plotter.Values) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// breakdownParts group the causes of results.Breakdown, bottom to top
// (TestBreakdownPartsCoverEveryCause checks that they sum to 1).
var breakdownParts = []struct {
	name string
	get  func(results.Breakdown) float64
}{
	{"compute (tensor cores)", func(b results.Breakdown) float64 { return b.Compute }},
	{"shared memory", func(b results.Breakdown) float64 { return b.Smem }},
	{"L2 (bandwidth + latency)", func(b results.Breakdown) float64 { return b.L2Bandwidth + b.L2Latency }},
	{"DRAM (bandwidth + latency)", func(b results.Breakdown) float64 { return b.DRAMBandwidth + b.DRAMLatency }},
	{"SM pipeline (barrier, dependence, issue, register file, tensor pipe)",
		func(b results.Breakdown) float64 {
			return b.Barrier + b.Dependence + b.Issue + b.RegisterFile + b.TensorPipe
		}},
	{"launch, tail, wave quantization, fix-up", func(b results.Breakdown) float64 {
		return b.Launch + b.Tail + b.Waves + b.Fixup
	}},
}

// breakdownTop is the tallest layer time per pass (time x count) of
// either mode: the breakdown plots of a workload share it as their scale.
func breakdownTop(rows []results.LayerResult) float64 {
	top := 0.0
	for _, r := range rows {
		top = max(top, r.TimeUS*float64(r.Count))
	}
	return top
}

// breakdownPlot stacks each layer's time per pass (time x count) by the
// resource it is attributed to, on a y scale up to top.
func breakdownPlot(w string, rows []results.LayerResult, mode tensorcore.Mode, top float64) (*figure, error) {
	var sel []results.LayerResult
	for _, r := range rows {
		if r.Mode == mode {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	names := make([]string, len(sel))
	for i, r := range sel {
		names[i] = layerName(r)
	}
	p := newPlot(fmt.Sprintf("%s (%s): where each layer's time goes", w, mode),
		"layer", "time per network pass (µs, time x count)")
	width, height := layerAxis(p, names)
	barW := 0.7 * (width - 1.5*vg.Inch) / vg.Length(len(sel))
	var below *plotter.BarChart
	stack := make([]*plotter.BarChart, len(breakdownParts))
	for i, part := range breakdownParts {
		vals := make(plotter.Values, len(sel))
		for j, r := range sel {
			vals[j] = part.get(r.Breakdown) * r.TimeUS * float64(r.Count)
		}
		bars, err := addStacked(p, vals, barW, i, below)
		if err != nil {
			return nil, err
		}
		below = bars
		stack[i] = bars
	}
	for i := len(stack) - 1; i >= 0; i-- { // top of the stack first
		p.Legend.Add(breakdownParts[i].name, stack[i])
	}
	p.Y.Min = 0
	p.Y.Max = top * 1.05
	return &figure{p: p, w: width, h: height,
		key: []string{"", "Dense and sparse plots of a", "workload share this scale."}}, nil
}

// WithPrecision adds the records' precision to an axis label, e.g.
// "speedup (x), fp16": a figure taken out of its report still says what
// it measured. Several precisions are listed in order.
func WithPrecision(label string, rows []results.LayerResult) string {
	var precs []string
	for _, r := range rows {
		if p := r.Precision.String(); r.Precision.Valid() && !slices.Contains(precs, p) {
			precs = append(precs, p)
		}
	}
	if len(precs) == 0 {
		return label
	}
	return label + ", " + strings.Join(precs, "/")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addStacked adds a bar series of colour i on top of below (nil: the
// first) and returns it, for the next to stack on.
func addStacked(p *plot.Plot, vals plotter.Values, width vg.Length, i int,
	below *plotter.BarChart) (*plotter.BarChart, error) {
	bars, err := plotter.NewBarChart(vals, width)
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(i)
	bars.LineStyle.Width = 0
	if below != nil {
		bars.StackOn(below)
	}
	p.Add(bars)
	return bars, nil
}
