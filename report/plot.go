package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"

	"github.com/stcsim/stcsim/tensorcore"
)

// plotFormats are written for every plot: PNG to look at, SVG to print.
var plotFormats = []string{"png", "svg"}

// WritePlots draws the run's plots into dir, per workload: the per-layer
// dense-vs-sparse speedup with the network total, the time breakdown per
// layer in each mode, and a roofline with the config's roofs. It returns
// the file names written, relative to dir, PNG before SVG.
func WritePlots(dir string, rep *sim.Report, cfg *configs.Config) ([]string, error) {
	var files []string
	stems := plotStems(rep)
	for _, w := range workloadsOf(rep) {
		rows := resultsOf(rep, w)
		base := stems[w]
		plots := []struct {
			name string
			make func() (*plot.Plot, size, error)
		}{
			{base + "-speedup", func() (*plot.Plot, size, error) {
				return speedupPlot(w, rows, totalOf(rep, w))
			}},
			{base + "-breakdown-dense", func() (*plot.Plot, size, error) {
				return breakdownPlot(w, rows, tensorcore.Dense)
			}},
			{base + "-breakdown-sparse", func() (*plot.Plot, size, error) {
				return breakdownPlot(w, rows, tensorcore.Sparse)
			}},
			{base + "-roofline", func() (*plot.Plot, size, error) {
				return rooflinePlot(w, rows, cfg)
			}},
		}
		for _, pl := range plots {
			p, sz, err := pl.make()
			if err != nil {
				return files, fmt.Errorf("plot %s: %w", pl.name, err)
			}
			if p == nil {
				continue // nothing to show (e.g. a dense-only run)
			}
			out, err := savePlot(p, sz.w, sz.h, dir, pl.name)
			if err != nil {
				return files, err
			}
			files = append(files, out...)
		}
	}
	return files, nil
}

// size is a plot's width and height.
type size struct{ w, h vg.Length }

// savePlot writes p as PNG and SVG, atomically, and returns the names.
func savePlot(p *plot.Plot, w, h vg.Length, dir, name string) ([]string, error) {
	var names []string
	for _, f := range plotFormats {
		wt, err := p.WriterTo(w, h, f)
		if err != nil {
			return names, fmt.Errorf("plot %s: %w", name, err)
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return names, fmt.Errorf("plot %s: %w", name, err)
		}
		file := name + "." + f
		if err := WriteAtomic(filepath.Join(dir, file), buf.Bytes()); err != nil {
			return names, err
		}
		names = append(names, file)
	}
	return names, nil
}

// plotKinds are the plots of one workload, as file-name suffixes.
var plotKinds = map[string]bool{"speedup": true, "breakdown-dense": true,
	"breakdown-sparse": true, "roofline": true}

// plotStems maps each workload to the stem of its plot files: its
// file-safe name, with -2, -3, ... after it when an earlier workload's
// name maps to the same stem (a/b and a_b), so no plot overwrites another.
func plotStems(rep *sim.Report) map[string]string {
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

func workloadsOf(rep *sim.Report) []string {
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

func resultsOf(rep *sim.Report, workload string) []sim.LayerResult {
	var out []sim.LayerResult
	for _, r := range rep.Results {
		if r.Workload == workload {
			out = append(out, r)
		}
	}
	return out
}

func totalOf(rep *sim.Report, workload string) *sim.Total {
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
func layerName(r sim.LayerResult) string {
	if r.Count > 1 {
		return fmt.Sprintf("%s x%d", r.Layer, r.Count)
	}
	return r.Layer
}

// speedupPlot: one bar per layer (sparse over dense time) and the network
// total, against the 1x line.
func speedupPlot(w string, rows []sim.LayerResult, total *sim.Total) (*plot.Plot, size, error) {
	var names []string
	var vals plotter.Values
	for _, r := range rows {
		if r.Mode == tensorcore.Sparse && r.Speedup > 0 {
			names = append(names, layerName(r))
			vals = append(vals, r.Speedup)
		}
	}
	if len(vals) == 0 || total == nil {
		return nil, size{}, nil
	}
	p := newPlot(w+": 2:4-sparse speedup over dense, per layer",
		"layer", "speedup (dense time / sparse time, x)")
	width, height := layerAxis(p, append(names, "network total"))
	barW := 0.6 * (width - 1.5*vg.Inch) / vg.Length(len(names)+1)
	bars, err := plotter.NewBarChart(append(vals, 0), barW)
	if err != nil {
		return nil, size{}, err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	tot := make(plotter.Values, len(vals)+1)
	tot[len(vals)] = total.Speedup
	totBar, err := plotter.NewBarChart(tot, barW)
	if err != nil {
		return nil, size{}, err
	}
	totBar.Color = plotutil.Color(1)
	totBar.LineStyle.Width = 0
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1},
		{X: float64(len(vals)) + 0.5, Y: 1}})
	if err != nil {
		return nil, size{}, err
	}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 60}
	p.Add(bars, totBar, one)
	p.Legend.Add("layer", bars)
	p.Legend.Add(fmt.Sprintf("network total (%.2fx)", total.Speedup), totBar)
	p.Legend.Add("1x (no gain)", one)
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Max = max(maxOf(vals), total.Speedup, 1) * 1.25
	return p, size{width, height}, nil
}

func maxOf(v plotter.Values) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// breakdownParts are the resources of sim.Breakdown, bottom to top.
var breakdownParts = []struct {
	name string
	get  func(sim.Breakdown) float64
}{
	{"compute (tensor cores)", func(b sim.Breakdown) float64 { return b.Compute }},
	{"shared memory", func(b sim.Breakdown) float64 { return b.Smem }},
	{"L2", func(b sim.Breakdown) float64 { return b.L2 }},
	{"DRAM", func(b sim.Breakdown) float64 { return b.DRAM }},
	{"latency (pipeline fill, launch)", func(b sim.Breakdown) float64 { return b.Latency }},
}

// breakdownPlot stacks each layer's time per pass (time x count) by the
// resource it is attributed to.
func breakdownPlot(w string, rows []sim.LayerResult, mode tensorcore.Mode) (*plot.Plot, size, error) {
	var sel []sim.LayerResult
	for _, r := range rows {
		if r.Mode == mode {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil, size{}, nil
	}
	names := make([]string, len(sel))
	for i, r := range sel {
		names[i] = layerName(r)
	}
	p := newPlot(fmt.Sprintf("%s (%s): where each layer's time goes", w, mode),
		"layer", "time per network pass (µs)")
	width, height := layerAxis(p, names)
	barW := 0.7 * (width - 1.5*vg.Inch) / vg.Length(len(sel))
	var below *plotter.BarChart
	top := 0.0
	for i, part := range breakdownParts {
		vals := make(plotter.Values, len(sel))
		for j, r := range sel {
			vals[j] = part.get(r.Breakdown) * r.TimeUS * float64(r.Count)
		}
		bars, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return nil, size{}, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(part.name, bars)
	}
	for _, r := range sel {
		top = max(top, r.TimeUS*float64(r.Count))
	}
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Max = top * 1.7 // room for the legend above the tallest bar
	return p, size{width, height}, nil
}

// Peak is a config's compute roof of one precision, in TFLOPS:
// SMs x tensor cores per SM x dense FMA per clock x 2 FLOP x clock, doubled
// for sparse.
func Peak(cfg *configs.Config, precision tensorcore.Precision, sparse bool) (float64, error) {
	pr, err := cfg.TensorCore.Get(precision)
	if err != nil {
		return 0, err
	}
	t := float64(cfg.GPU.SMCount) * float64(cfg.SM.SubPartitions) *
		float64(pr.DenseFMAPerClk) * 2 * float64(cfg.GPU.ClockMHz) * 1e6 / 1e12
	if sparse {
		t *= 2
	}
	return t, nil
}

// DRAMRoof is the config's sustained DRAM bandwidth in GB/s.
func DRAMRoof(cfg *configs.Config) float64 {
	return cfg.Memory.DRAM.BandwidthGBps * cfg.Memory.DRAM.Efficiency
}

// Intensity is a layer's arithmetic intensity: FLOPs (2mnk per GEMM of
// the batch) per DRAM byte; 0 when it moved no DRAM bytes.
func Intensity(r sim.LayerResult) float64 {
	bytes := float64(r.DRAMReadBytes + r.DRAMWriteBytes)
	if bytes == 0 {
		return 0
	}
	return 2 * float64(r.M) * float64(r.N) * float64(r.K) *
		float64(max(1, r.Batch)) / bytes
}

// rooflinePlot: achieved TFLOPS against arithmetic intensity for every
// layer in each mode, under the config's compute and bandwidth roofs.
func rooflinePlot(w string, rows []sim.LayerResult, cfg *configs.Config) (*plot.Plot, size, error) {
	pts := map[tensorcore.Mode]plotter.XYs{}
	lo, hi := math.Inf(1), 0.0
	var precs []tensorcore.Precision
	for _, r := range rows {
		ai := Intensity(r)
		if ai <= 0 || r.TFLOPS <= 0 {
			continue
		}
		pts[r.Mode] = append(pts[r.Mode], plotter.XY{X: ai, Y: r.TFLOPS})
		lo, hi = min(lo, ai), max(hi, ai)
		if !slices.Contains(precs, r.Precision) {
			precs = append(precs, r.Precision)
		}
	}
	if len(pts) == 0 {
		return nil, size{}, nil
	}
	bw := DRAMRoof(cfg)
	p := newPlot(w+": roofline ("+cfg.Name+")",
		"arithmetic intensity (FLOP per DRAM byte)",
		"TFLOPS (dense-equivalent)")
	// Both axes are logarithmic: the plot holds log10 values on linear
	// axes with ticks labelled in real units (gonum's log scale misplaces
	// the axis label's glyph box and squeezes the plot).
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	// Span the ridge points so both roofs show.
	xmin, xmax := lo/4, hi*4
	ymax := 0.0
	for _, prec := range precs {
		peak, err := Peak(cfg, prec, true)
		if err != nil {
			return nil, size{}, err
		}
		ridge := peak * 1e3 / bw // the sparse roof's ridge is the rightmost
		xmin, xmax = min(xmin, ridge/8), max(xmax, ridge*4)
		ymax = max(ymax, peak)
	}
	ymin := ymax
	for _, xy := range pts {
		for _, pt := range xy {
			ymin = min(ymin, pt.Y)
		}
	}
	ymin = min(ymin, bw*xmin/1e3) / 2
	for i, prec := range precs {
		for j, kind := range tensorcore.Modes {
			sparse := kind == tensorcore.Sparse
			peak, _ := Peak(cfg, prec, sparse)
			roof, err := roofLine(peak, bw, xmin, xmax)
			if err != nil {
				return nil, size{}, err
			}
			roof.Color = plotutil.Color(2*i + j)
			roof.Width = vg.Points(1.5)
			if sparse {
				roof.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(roof)
			p.Legend.Add(fmt.Sprintf("%s %s roof: %.0f TFLOPS, %.0f GB/s",
				prec, kind, peak, bw), roof)
		}
	}
	for i, mode := range tensorcore.Modes {
		xy := pts[mode]
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(log10XY(xy))
		if err != nil {
			return nil, size{}, err
		}
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Color = plotutil.DarkColors[i]
		sc.GlyphStyle.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add(mode.String()+" layers", sc)
	}
	p.X.Min, p.X.Max = math.Log10(xmin), math.Log10(xmax)
	p.Y.Min, p.Y.Max = math.Log10(ymin), math.Log10(ymax*1.5)
	// Bottom right lies under the flat roofs, where no layer can be.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	return p, size{8 * vg.Inch, 5 * vg.Inch}, nil
}

// logTicks marks an axis that holds log10 values at 1, 2 and 5 times
// each power of ten, labelled with the real values.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := math.Log10(m) + e
			if v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(
					m*math.Pow(10, e), 'g', -1, 64)})
			}
		}
	}
	return out
}

func log10XY(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	for i, p := range xy {
		out[i] = plotter.XY{X: math.Log10(p.X), Y: math.Log10(p.Y)}
	}
	return out
}

// roofLine samples min(peak, bw x intensity) on a log grid, as log10
// values.
func roofLine(peakTFLOPS, bwGBps, xmin, xmax float64) (*plotter.Line, error) {
	const n = 200
	xy := make(plotter.XYs, n)
	for i := range xy {
		x := xmin * math.Pow(xmax/xmin, float64(i)/(n-1))
		xy[i] = plotter.XY{X: x, Y: min(peakTFLOPS, bwGBps*x/1e3)}
	}
	return plotter.NewLine(log10XY(xy))
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Series is one line of a sweep plot: Y at each X (grid values as
// written; numeric when every X of every series is a number).
type Series struct {
	Label string
	X     []string
	Y     []float64
}

// LinePlot draws series as lines with markers into path (.png or .svg):
// a numeric X axis when all X values are numbers, categories otherwise.
func LinePlot(path, title, xLabel, yLabel string, series []Series) error {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext != "png" && ext != "svg" {
		return fmt.Errorf("plot %s: want a .png or .svg file name", path)
	}
	p := newPlot(title, xLabel, yLabel)
	xs, numeric := xPositions(series)
	for i, s := range series {
		xy := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xy[j] = plotter.XY{X: xs[s.X[j]], Y: s.Y[j]}
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return fmt.Errorf("plot %s: series %q: %w", path, s.Label, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		points.Shape = plotutil.Shape(i)
		points.Color = plotutil.Color(i)
		points.Radius = vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
	}
	if numeric {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range xs {
			lo, hi = min(lo, v), max(hi, v)
		}
		pad := 0.05 * (hi - lo)
		p.X.Min, p.X.Max = lo-pad, hi+pad
		p.X.Tick.Marker = niceTicks{}
		if len(xs) <= 12 {
			p.X.Tick.Marker = valueTicks(xs) // tick exactly the swept values
		}
	} else {
		names := make([]string, len(xs))
		for v, i := range xs {
			names[int(i)] = v
		}
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.3, float64(len(names))-0.7
	}
	p.Y.Min = 0
	ymax := 0.0
	for _, s := range series {
		for _, y := range s.Y {
			ymax = max(ymax, y)
		}
	}
	// Leave room above the data for the legend.
	p.Y.Max = ymax * (1.15 + 0.07*float64(len(series)))
	p.Legend.Top = true
	height := 4.5*vg.Inch + vg.Length(max(0, len(series)-5))*0.2*vg.Inch
	wt, err := p.WriterTo(8*vg.Inch, height, ext)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return WriteAtomic(path, buf.Bytes())
}

// valueTicks marks each X value, labelled as written.
func valueTicks(xs map[string]float64) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for label, v := range xs {
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return ticks
}

// xPositions places X values: at their numeric value when all are
// numbers, otherwise as categories 0, 1, ... in first-seen order.
func xPositions(series []Series) (map[string]float64, bool) {
	pos := map[string]float64{}
	numeric := true
	for _, s := range series {
		for _, x := range s.X {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil {
				numeric = false
			}
			pos[x] = v
		}
	}
	if numeric {
		return pos, true
	}
	var order []string
	for _, s := range series {
		for _, x := range s.X {
			if !containsString(order, x) {
				order = append(order, x)
			}
		}
	}
	for i, x := range order {
		pos[x] = float64(i)
	}
	return pos, false
}
