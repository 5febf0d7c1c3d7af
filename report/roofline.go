package report

// The roofline: its arithmetic (a config's roofs, a record's intensity) and
// the run's roofline figure.

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// Peak is a config's compute roof of one precision at its clock, in
// TFLOPS (dense-equivalent when sparse; configs.Config.PeakTFLOPS).
func Peak(cfg *configs.Config, precision tensorcore.Precision, sparse bool) (float64, error) {
	return cfg.PeakTFLOPS(precision, sparse, 0)
}

// DRAMRoof is the config's sustained DRAM bandwidth in GB/s.
func DRAMRoof(cfg *configs.Config) float64 {
	return cfg.Memory.DRAM.SustainedGBps()
}

// Intensity is a layer's arithmetic intensity: FLOPs (2mnk per GEMM of
// the batch) per DRAM byte; 0 when it moved no DRAM bytes.
func Intensity(r results.LayerResult) float64 {
	bytes := float64(r.DRAMReadBytes + r.DRAMWriteBytes)
	if bytes == 0 {
		return 0
	}
	return r.FLOPs() / bytes
}

// layerNumbers numbers a workload's layers 1, 2, ... in the order of its
// results: the roofline's point labels and report.md's "#" column.
func layerNumbers(rows []results.LayerResult) (map[string]int, []string) {
	num := map[string]int{}
	var order []string
	for _, r := range rows {
		if _, ok := num[r.Layer]; !ok {
			order = append(order, r.Layer)
			num[r.Layer] = len(order)
		}
	}
	return num, order
}

// rooflinePlot: achieved TFLOPS against arithmetic intensity for every
// layer in each mode, under the config's compute and bandwidth roofs.
// Each point carries its layer's number (the key beside the plot names
// them) and a line joins a layer's dense and sparse points.
func rooflinePlot(w string, rows []results.LayerResult, cfg *configs.Config) (*figure, error) {
	num, order := layerNumbers(rows)
	pts := map[tensorcore.Mode]plotter.XYs{}
	labels := map[tensorcore.Mode][]string{}
	at := map[string]map[tensorcore.Mode]plotter.XY{} // layer -> mode -> point
	lo, hi := math.Inf(1), 0.0
	var precs []tensorcore.Precision
	for _, r := range rows {
		ai := Intensity(r)
		if ai <= 0 || r.TFLOPS <= 0 {
			continue
		}
		pt := plotter.XY{X: ai, Y: r.TFLOPS}
		pts[r.Mode] = append(pts[r.Mode], pt)
		labels[r.Mode] = append(labels[r.Mode], strconv.Itoa(num[r.Layer]))
		if at[r.Layer] == nil {
			at[r.Layer] = map[tensorcore.Mode]plotter.XY{}
		}
		at[r.Layer][r.Mode] = pt
		lo, hi = min(lo, ai), max(hi, ai)
		if !slices.Contains(precs, r.Precision) {
			precs = append(precs, r.Precision)
		}
	}
	if len(pts) == 0 {
		return nil, nil
	}
	bw := DRAMRoof(cfg)
	p := newPlot(w+": roofline ("+cfg.Name+")",
		"arithmetic intensity (FLOP per DRAM byte during the kernel)",
		WithPrecision(unitOf(rows)+" (dense-equivalent)", rows))
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
			return nil, err
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
	if err := addRoofs(p, cfg, precs, bw, xmin, xmax); err != nil {
		return nil, err
	}
	if err := addPairLines(p, order, at); err != nil {
		return nil, err
	}
	placed := &placedLabels{glyph: vg.Points(3)}
	for i, mode := range tensorcore.Modes {
		if err := addLayerPoints(p, placed, i, mode, pts[mode], labels[mode]); err != nil {
			return nil, err
		}
	}
	p.Add(placed)
	p.X.Min, p.X.Max = math.Log10(xmin), math.Log10(xmax)
	p.Y.Min, p.Y.Max = math.Log10(ymin), math.Log10(ymax*1.5)
	key := []string{"", "layers:"}
	for i, l := range order {
		key = append(key, fmt.Sprintf("%2d  %s", i+1, l))
	}
	return &figure{p: p, w: 8 * vg.Inch, h: 5.5 * vg.Inch, key: key}, nil
}

// addRoofs draws each precision's dense and sparse compute roof over the
// DRAM roof.
func addRoofs(p *plot.Plot, cfg *configs.Config, precs []tensorcore.Precision, bw, xmin, xmax float64) error {
	for i, prec := range precs {
		for j, sparse := range []bool{false, true} {
			peak, err := Peak(cfg, prec, sparse)
			if err != nil {
				return err
			}
			roof, err := roofLine(peak, bw, xmin, xmax)
			if err != nil {
				return err
			}
			roof.Color = plotutil.Color(2*i + j)
			roof.Width = vg.Points(1.5)
			kind := "dense"
			if sparse {
				roof.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				kind = "sparse"
			}
			p.Add(roof)
			p.Legend.Add(fmt.Sprintf("%s %s roof: %.0f %s, %.0f GB/s",
				prec, kind, peak, throughputUnit(prec), bw), roof)
		}
	}
	return nil
}

// addPairLines joins each layer's dense and sparse points.
func addPairLines(p *plot.Plot, order []string, at map[string]map[tensorcore.Mode]plotter.XY) error {
	first := true
	for _, l := range order {
		d, okD := at[l][tensorcore.Dense]
		sp, okS := at[l][tensorcore.Sparse]
		if !okD || !okS || d == sp {
			continue
		}
		line, err := plotter.NewLine(log10XY(plotter.XYs{d, sp}))
		if err != nil {
			return err
		}
		line.Color = color.Gray{Y: 170}
		line.Width = vg.Points(0.8)
		p.Add(line)
		if first {
			p.Legend.Add("a layer's dense -> sparse", line)
			first = false
		}
	}
	return nil
}

// addLayerPoints draws one mode's points with their layer numbers.
func addLayerPoints(p *plot.Plot, placed *placedLabels, i int, mode tensorcore.Mode, xy plotter.XYs, labels []string) error {
	if len(xy) == 0 {
		return nil
	}
	logXY := log10XY(xy)
	sc, err := plotter.NewScatter(logXY)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Shape = plotutil.Shape(i)
	sc.GlyphStyle.Color = plotutil.DarkColors[i]
	sc.GlyphStyle.Radius = vg.Points(3)
	sty := draw.TextStyle{Color: plotutil.DarkColors[i], Font: p.X.Tick.Label.Font,
		Handler: p.X.Tick.Label.Handler}
	sty.Font.Size = vg.Points(8)
	placed.add(logXY, labels, sty)
	p.Add(sc)
	p.Legend.Add(mode.String()+" layers (numbered)", sc)
	return nil
}

// throughputUnit is TOPS for integer precisions, TFLOPS otherwise.
func throughputUnit(precision tensorcore.Precision) string {
	if precision == tensorcore.INT8 {
		return "TOPS"
	}
	return "TFLOPS"
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
