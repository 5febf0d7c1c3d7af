package report

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// placedLabels is a plotter of point labels that do not overlap: each
// label takes the first of a ring of positions around its point whose
// box is clear of the labels placed before it and of every point, and
// the nearest one if none is (so that numbered roofline points stay
// readable where layers crowd). Placement happens at draw time, in
// canvas units, where the boxes are known.
type placedLabels struct {
	xy     plotter.XYs
	labels []string
	styles []draw.TextStyle
	// glyph is the radius of the points drawn at xy, which labels avoid.
	glyph vg.Length
}

// add appends one group's labels in its style.
func (pl *placedLabels) add(xy plotter.XYs, labels []string, sty draw.TextStyle) {
	for i := range xy {
		pl.xy = append(pl.xy, xy[i])
		pl.labels = append(pl.labels, labels[i])
		pl.styles = append(pl.styles, sty)
	}
}

// Plot implements plot.Plotter.
func (pl *placedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pts := make([]vg.Point, len(pl.xy))
	var taken []vg.Rectangle
	for i, xy := range pl.xy {
		pts[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		r := pl.glyph
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: pts[i].X - r, Y: pts[i].Y - r},
			Max: vg.Point{X: pts[i].X + r, Y: pts[i].Y + r}})
	}
	for i, pt := range pts {
		sty := pl.styles[i]
		w, h := sty.Width(pl.labels[i]), sty.Height(pl.labels[i])
		box := pl.place(pt, w, h, taken)
		taken = append(taken, box)
		c.FillText(sty, box.Min, pl.labels[i])
	}
}

// place is the label box around pt, w x h, that overlaps taken least
// (the first clear one in the ring's order).
func (pl *placedLabels) place(pt vg.Point, w, h vg.Length, taken []vg.Rectangle) vg.Rectangle {
	gap := pl.glyph + vg.Points(1)
	var best vg.Rectangle
	bestArea := vg.Length(-1)
	for ring := vg.Length(1); ring <= 3; ring++ {
		d := gap * ring
		for _, off := range []vg.Point{
			{X: d, Y: d / 2}, {X: d, Y: -h - d/2}, {X: -w - d, Y: d / 2}, {X: -w - d, Y: -h - d/2},
			{X: -w / 2, Y: d}, {X: -w / 2, Y: -h - d}, {X: d, Y: -h / 2}, {X: -w - d, Y: -h / 2},
		} {
			min := vg.Point{X: pt.X + off.X, Y: pt.Y + off.Y}
			box := vg.Rectangle{Min: min, Max: vg.Point{X: min.X + w, Y: min.Y + h}}
			area := overlap(box, taken)
			if area == 0 {
				return box
			}
			if bestArea < 0 || area < bestArea {
				best, bestArea = box, area
			}
		}
	}
	return best
}

// overlap is the area box shares with the rectangles.
func overlap(box vg.Rectangle, rs []vg.Rectangle) vg.Length {
	var sum vg.Length
	for _, r := range rs {
		w := min(box.Max.X, r.Max.X) - max(box.Min.X, r.Min.X)
		h := min(box.Max.Y, r.Max.Y) - max(box.Min.Y, r.Min.Y)
		if w > 0 && h > 0 {
			sum += w * h
		}
	}
	return sum
}
