package report

import (
	"bytes"
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// figure is a plot with a side panel to its right: the plot's legend and
// an optional key (lines of text, e.g. which number marks which layer),
// so that neither covers the data.
type figure struct {
	p    *plot.Plot
	w, h vg.Length // the plot area, without the panel
	key  []string
	// caption are lines of small type under the plot and panel.
	caption []string
}

// panelPad is the gap between the plot and its side panel, and around
// the panel's contents.
const panelPad = 6

// render draws the figure in format ("png" or "svg").
func (f figure) render(format string) ([]byte, error) {
	leg := f.p.Legend
	f.p.Legend = plot.NewLegend() // drawn in the panel instead
	defer func() { f.p.Legend = leg }()
	panelW := f.panelWidth(&leg)
	f.caption = f.wrappedCaption(&leg, f.w+panelW-2*panelPad)
	capH := f.captionHeight(&leg)
	height := max(f.h, f.panelHeight(&leg))
	c, err := draw.NewFormattedCanvas(f.w+panelW, height+capH, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	f.drawCaption(dc, &leg)
	dc = draw.Crop(dc, 0, 0, capH, 0)
	f.p.Draw(draw.Crop(dc, panelPad, -panelW, height-f.h+panelPad, -panelPad))
	if panelW > 0 {
		panel := draw.Crop(dc, f.w+panelPad, -panelPad, panelPad,
			-2*panelPad)
		f.drawPanel(panel, &leg)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", format, err)
	}
	return buf.Bytes(), nil
}

// wrappedCaption is the caption broken into lines no wider than w.
func (f figure) wrappedCaption(leg *plot.Legend, w vg.Length) []string {
	var out []string
	for _, line := range f.caption {
		out = append(out, strings.Split(wrapTitle(line, keyStyle(leg), w), "\n")...)
	}
	return out
}

// captionHeight is the room the caption takes under the figure.
func (f figure) captionHeight(leg *plot.Legend) vg.Length {
	if len(f.caption) == 0 {
		return 0
	}
	return vg.Length(len(f.caption))*keyLine(leg) + 2*panelPad
}

// drawCaption writes the caption lines at the bottom left of c.
func (f figure) drawCaption(c draw.Canvas, leg *plot.Legend) {
	sty := keyStyle(leg)
	y := c.Min.Y + vg.Length(len(f.caption))*keyLine(leg) + panelPad
	for _, line := range f.caption {
		y -= keyLine(leg)
		fillWords(c, sty, vg.Point{X: c.Min.X + panelPad, Y: y}, line)
	}
}

// fillWords draws a line of text word by word at the widths the text
// measures: drawn whole, a space before some capitals kerns to nothing in
// the rasterizer ("NVIDIA A100" read "NVIDIAA100").
func fillWords(c draw.Canvas, sty draw.TextStyle, at vg.Point, line string) {
	lead := len(line) - len(strings.TrimLeft(line, " "))
	x := at.X + sty.Width(line[:lead])
	for i, word := range strings.Fields(line) {
		if i > 0 {
			x += sty.Width(" ")
		}
		c.FillText(sty, vg.Point{X: x, Y: at.Y}, word)
		x += sty.Width(word)
	}
}

// panelWidth is the side panel's width: the widest legend entry or key
// line; 0 when there is neither.
func (f figure) panelWidth(leg *plot.Legend) vg.Length {
	r := leg.Rectangle(draw.Canvas{})
	w := r.Max.X - r.Min.X
	for _, line := range f.key {
		w = max(w, keyStyle(leg).Width(line))
	}
	if w == 0 {
		return 0
	}
	return w + 5*panelPad
}

// panelHeight is the height the panel's contents need.
func (f figure) panelHeight(leg *plot.Legend) vg.Length {
	return legendHeight(leg) + vg.Length(len(f.key)+1)*keyLine(leg) +
		4*panelPad
}

func legendHeight(leg *plot.Legend) vg.Length {
	r := leg.Rectangle(draw.Canvas{})
	return r.Max.Y - r.Min.Y
}

func keyStyle(leg *plot.Legend) draw.TextStyle {
	sty := leg.TextStyle
	sty.Font.Size = vg.Points(9)
	return sty
}

func keyLine(leg *plot.Legend) vg.Length {
	return keyStyle(leg).Height("0") * 1.15
}

// drawPanel draws the legend at the top of c and the key under it.
func (f figure) drawPanel(c draw.Canvas, leg *plot.Legend) {
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = 0, 0
	leg.Draw(c)
	y := c.Max.Y - legendHeight(leg) - vg.Points(panelPad)
	sty := keyStyle(leg)
	for _, line := range f.key {
		y -= keyLine(leg)
		fillWords(c, sty, vg.Point{X: c.Min.X, Y: y}, line)
	}
}
