package report

import (
	"github.com/stcsim/stcsim/results"

	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stcsim/stcsim/configs"
)

// maxLines is how many lines a sweep plot draws; more are cut to the
// ones with the highest mean, and the key says so.
const maxLines = 12

// LineOptions are a sweep plot's words, size and reference marks.
type LineOptions struct {
	Title, XLabel, YLabel string
	// WidthIn and HeightIn are the plot area in inches (0: 8 x 5.5).
	WidthIn, HeightIn float64
	// FontSize is the tick and legend type size in points (0: 10); axis
	// labels are 2 points larger, the title 4.
	FontSize float64
	// RefLabel, when set, draws a horizontal reference line at RefY
	// (speedup: 1, "1x: no gain") labelled so in the legend.
	RefY     float64
	RefLabel string
	// BaselineX, when set, marks the default configuration's value of
	// the X key with a vertical dotted line, labelled BaselineLabel.
	BaselineX     string
	BaselineLabel string
	// Caption are lines under the plot saying what produced it (config,
	// the overrides common to every point, the store).
	Caption []string
}

// LinePlot draws series as lines with markers into path (.png, .svg or
// .pdf): a numeric X axis when all X values are numbers, categories
// otherwise. The Y range is fitted to the data (and the reference line),
// the legend sits beside the plot, and beyond maxLines series only those
// with the highest mean are drawn.
func LinePlot(path string, o LineOptions, series []results.Series) error {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext != "png" && ext != "svg" && ext != "pdf" {
		return fmt.Errorf("plot %s: want a .png, .svg or .pdf file name", path)
	}
	o = o.withDefaults()
	series, key := topSeries(series)
	w := vg.Length(o.WidthIn) * vg.Inch
	p := newPlot("", o.XLabel, o.YLabel)
	styleText(p, o.FontSize)
	p.Title.Text = wrapTitle(o.Title, p.Title.TextStyle, w)
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
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		points.Shape = plotutil.Shape(i)
		points.Color = plotutil.Color(i)
		points.Radius = vg.Points(3)
		if refined(s) { // a few points among the fast tier's lines
			points.Shape = draw.BoxGlyph{}
			points.Color = color.Black
			points.Radius = vg.Points(4.5)
			line.Width = vg.Points(1)
		}
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
	}
	setXAxis(p, xs, numeric)
	p.Y.Min, p.Y.Max = fittedRange(series)
	if o.RefLabel != "" {
		if err := addRefLine(p, o); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
	}
	if o.BaselineX != "" {
		if err := addBaseline(p, o, xs, numeric); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
	}
	fig := &figure{p: p, w: w, h: vg.Length(o.HeightIn) * vg.Inch, key: key, caption: o.Caption}
	data, err := fig.render(ext)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return WriteAtomic(path, data)
}

// refined says whether a series holds a sweep's refined points: those
// re-run at instruction level (--refine) beside the fast tier's lines,
// which get large black squares so that they stand out.
func refined(s results.Series) bool {
	return strings.Contains(s.Label, "sim.fidelity="+configs.FidelityInstruction)
}

func (o LineOptions) withDefaults() LineOptions {
	if o.WidthIn <= 0 {
		o.WidthIn = 8
	}
	if o.HeightIn <= 0 {
		o.HeightIn = 5.5
	}
	if o.FontSize <= 0 {
		o.FontSize = 10
	}
	return o
}

// styleText sets the plot's type sizes from the base size.
func styleText(p *plot.Plot, base float64) {
	p.Title.TextStyle.Font.Size = vg.Points(base + 4)
	p.X.Label.TextStyle.Font.Size = vg.Points(base + 2)
	p.Y.Label.TextStyle.Font.Size = vg.Points(base + 2)
	p.X.Tick.Label.Font.Size = vg.Points(base)
	p.Y.Tick.Label.Font.Size = vg.Points(base)
	p.Legend.TextStyle.Font.Size = vg.Points(base)
}

// wrapTitle breaks a title into lines no wider than w (at spaces), so
// that a long one is neither cut at the edges nor drawn over the legend.
func wrapTitle(title string, sty draw.TextStyle, w vg.Length) string {
	var lines []string
	for _, para := range strings.Split(title, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := strings.TrimSpace(line + " " + word)
			if line != "" && sty.Width(try) > w {
				lines = append(lines, line)
				try = word
			}
			line = try
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// addRefLine draws the horizontal reference line across the X range and
// widens the Y range to show it.
func addRefLine(p *plot.Plot, o LineOptions) error {
	err := addMark(p, o.RefLabel, plotter.XYs{{X: p.X.Min, Y: o.RefY}, {X: p.X.Max, Y: o.RefY}},
		0x40, 1, []vg.Length{vg.Points(6), vg.Points(3)})
	if err != nil {
		return err
	}
	lo, hi := min(p.Y.Min, o.RefY), max(p.Y.Max, o.RefY)
	pad := 0.04 * (hi - lo)
	if o.RefY <= p.Y.Min {
		lo -= pad
	}
	if o.RefY >= p.Y.Max {
		hi += pad
	}
	p.Y.Min, p.Y.Max = lo, hi
	return nil
}

// addBaseline marks the default configuration's X value with a vertical
// dotted line (widening a numeric X range to reach it).
func addBaseline(p *plot.Plot, o LineOptions, xs map[string]float64, numeric bool) error {
	x, ok := xs[o.BaselineX]
	if numeric {
		v, err := strconv.ParseFloat(o.BaselineX, 64)
		if err != nil {
			return fmt.Errorf("baseline %q: not a number on a numeric axis", o.BaselineX)
		}
		x, ok = v, true
		p.X.Min, p.X.Max = min(p.X.Min, v), max(p.X.Max, v)
	}
	if !ok {
		return nil // a category the plot does not show: nothing to mark
	}
	return addMark(p, o.BaselineLabel, plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}},
		0x20, 1.2, []vg.Length{vg.Points(1.5), vg.Points(2.5)})
}

// addMark draws a grey reference line through xy, named in the legend.
func addMark(p *plot.Plot, label string, xy plotter.XYs, grey uint8, width float64, dashes []vg.Length) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color = color.Gray{Y: grey}
	l.Width = vg.Points(width)
	l.Dashes = dashes
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// topSeries keeps at most maxLines series, those with the highest mean
// Y, and returns the key lines that say what was left out.
func topSeries(series []results.Series) ([]results.Series, []string) {
	if len(series) <= maxLines {
		return series, nil
	}
	mean := func(s results.Series) float64 {
		t := 0.0
		for _, y := range s.Y {
			t += y
		}
		return t / float64(max(1, len(s.Y)))
	}
	kept := append([]results.Series(nil), series...)
	sort.SliceStable(kept, func(i, j int) bool { return mean(kept[i]) > mean(kept[j]) })
	kept = kept[:maxLines]
	return kept, []string{"", fmt.Sprintf("%d of %d lines shown:", maxLines, len(series)),
		"those with the highest mean.", "Narrow with --where KEY=VALUE,", "or use --by workload."}
}

// setXAxis places the X ticks: the swept values when numeric and few, round
// values when many, the categories otherwise.
func setXAxis(p *plot.Plot, xs map[string]float64, numeric bool) {
	if !numeric {
		names := make([]string, len(xs))
		for v, i := range xs {
			names[int(i)] = v
		}
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.3, float64(len(names))-0.7
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range xs {
		lo, hi = min(lo, v), max(hi, v)
	}
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.5 * max(1, math.Abs(lo))
	}
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.X.Tick.Marker = niceTicks{}
	if len(xs) <= 12 {
		p.X.Tick.Marker = valueTicks(xs) // tick exactly the swept values
	}
}

// fittedRange is a Y range around the data with a margin, not from 0, so
// that differences between points show.
func fittedRange(series []results.Series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, y := range s.Y {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	pad := 0.08 * (hi - lo)
	if pad == 0 {
		pad = 0.05 * max(math.Abs(hi), 1e-9)
	}
	return lo - pad, hi + pad
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
func xPositions(series []results.Series) (map[string]float64, bool) {
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
