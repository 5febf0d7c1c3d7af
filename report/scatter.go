package report

import (
	"github.com/stcsim/stcsim/results"

	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ParetoFront is the points of one group that no other point of the
// group beats on both axes (X no larger and Y no smaller, one strictly),
// in ascending X: the trade-off curve when X is a cost and Y a gain.
func ParetoFront(points []results.ScatterPoint) []results.ScatterPoint {
	var front []results.ScatterPoint
	for i, p := range points {
		dominated := false
		for j, o := range points {
			if i != j && o.X <= p.X && o.Y >= p.Y && (o.X < p.X || o.Y > p.Y) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, p)
		}
	}
	sort.SliceStable(front, func(i, j int) bool { return front[i].X < front[j].X })
	return front
}

// ScatterPlot draws points into path (.png, .svg or .pdf), each numbered,
// one colour and shape per group, with each group's Pareto front (less X,
// more Y) as a dashed line; the side panel's key says which grid values
// each number stands for.
func ScatterPlot(path string, o LineOptions, points []results.ScatterPoint) error {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext != "png" && ext != "svg" && ext != "pdf" {
		return fmt.Errorf("plot %s: want a .png, .svg or .pdf file name", path)
	}
	o = o.withDefaults()
	w := vg.Length(o.WidthIn) * vg.Inch
	p := newPlot("", o.XLabel, o.YLabel)
	styleText(p, o.FontSize)
	p.Title.Text = wrapTitle(o.Title, p.Title.TextStyle, w)
	var groups []string
	byGroup := map[string][]results.ScatterPoint{}
	for _, pt := range points {
		if _, ok := byGroup[pt.Group]; !ok {
			groups = append(groups, pt.Group)
		}
		byGroup[pt.Group] = append(byGroup[pt.Group], pt)
	}
	number := map[string]int{} // one number per label, across groups
	var key []string
	for _, pt := range points {
		if _, ok := number[pt.Label]; !ok {
			number[pt.Label] = len(number) + 1
			key = append(key, fmt.Sprintf("%d: %s", number[pt.Label], pt.Label))
		}
	}
	for i, g := range groups {
		if err := addGroup(p, i, g, byGroup[g], number); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
	}
	p.X.Min, p.X.Max = pointRange(points, func(pt results.ScatterPoint) float64 { return pt.X })
	p.Y.Min, p.Y.Max = pointRange(points, func(pt results.ScatterPoint) float64 { return pt.Y })
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	if o.RefLabel != "" {
		if err := addRefLine(p, o); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
	}
	fig := &figure{p: p, w: w, h: vg.Length(o.HeightIn) * vg.Inch,
		key: append([]string{"", "points:"}, key...), caption: o.Caption}
	data, err := fig.render(ext)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return WriteAtomic(path, data)
}

// addGroup draws one group's numbered points and its Pareto front.
func addGroup(p *plot.Plot, i int, group string, pts []results.ScatterPoint, number map[string]int) error {
	xy := make(plotter.XYs, len(pts))
	labels := make([]string, len(pts))
	for j, pt := range pts {
		xy[j] = plotter.XY{X: pt.X, Y: pt.Y}
		labels[j] = strconv.Itoa(number[pt.Label])
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return fmt.Errorf("group %q: %w", group, err)
	}
	sc.GlyphStyle.Shape = plotutil.Shape(i)
	sc.GlyphStyle.Color = plotutil.Color(i)
	sc.GlyphStyle.Radius = vg.Points(3)
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: labels})
	if err != nil {
		return fmt.Errorf("group %q: %w", group, err)
	}
	for j := range lb.TextStyle {
		lb.TextStyle[j].Font.Size = vg.Points(8)
		lb.TextStyle[j].Color = plotutil.Color(i)
	}
	lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
	p.Add(sc, lb)
	p.Legend.Add(group, sc)
	front := ParetoFront(pts)
	if len(front) < 2 {
		return nil
	}
	fxy := make(plotter.XYs, len(front))
	for j, pt := range front {
		fxy[j] = plotter.XY{X: pt.X, Y: pt.Y}
	}
	line, err := plotter.NewLine(fxy)
	if err != nil {
		return fmt.Errorf("group %q: %w", group, err)
	}
	line.Color = plotutil.Color(i)
	line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(line)
	p.Legend.Add(group+": Pareto front", line)
	return nil
}

// pointRange is a range around one coordinate of the points with a margin.
func pointRange(points []results.ScatterPoint, f func(results.ScatterPoint) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		lo, hi = min(lo, f(pt)), max(hi, f(pt))
	}
	pad := 0.08 * (hi - lo)
	if pad == 0 {
		pad = 0.05 * max(math.Abs(hi), 1e-9)
	}
	return lo - pad, hi + pad
}
