package report

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// energyColors are the event classes' colours, in energy.Breakdown's
// class order (more classes than plotutil's default palette).
var energyColors = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},  // mma
	color.RGBA{R: 255, G: 127, B: 14, A: 255},  // metadata
	color.RGBA{R: 255, G: 187, B: 120, A: 255}, // fp32
	color.RGBA{R: 44, G: 160, B: 44, A: 255},   // register_file
	color.RGBA{R: 148, G: 103, B: 189, A: 255}, // issue
	color.RGBA{R: 214, G: 39, B: 40, A: 255},   // smem
	color.RGBA{R: 227, G: 119, B: 194, A: 255}, // l1
	color.RGBA{R: 140, G: 86, B: 75, A: 255},   // l2
	color.RGBA{R: 188, G: 189, B: 34, A: 255},  // crossbar
	color.RGBA{R: 23, G: 190, B: 207, A: 255},  // dram
	color.RGBA{R: 127, G: 127, B: 127, A: 255}, // sm_static
	color.RGBA{R: 199, G: 199, B: 199, A: 255}, // board
}

// size is a plot's width and height.
type size struct{ w, h vg.Length }

// asFigure wraps a plot of the given size as a figure (legend beside it);
// nil when there is nothing to plot.
func asFigure(p *plot.Plot, sz size, err error) (*figure, error) {
	if err != nil || p == nil {
		return nil, err
	}
	return &figure{p: p, w: sz.w, h: sz.h}, nil
}

// energyBreakdownPlot stacks the workload's energy per network pass by
// event class, one bar per mode.
func energyBreakdownPlot(w string, rep *results.Report) (*plot.Plot, size, error) {
	var names []string
	var parts []energy.Breakdown
	for _, t := range rep.Totals {
		if t.Workload == w {
			names = append(names, t.Mode.String())
			parts = append(parts, t.Energy)
		}
	}
	if len(parts) == 0 {
		return nil, size{}, nil
	}
	p := newPlot(w+": energy per pass by event class", "mode",
		WithPrecision("energy per network pass (mJ)", resultsOf(rep, w)))
	p.NominalX(names...)
	var below *plotter.BarChart
	top := 0.0
	for i, c := range (energy.Breakdown{}).Classes() {
		vals := make(plotter.Values, len(parts))
		for j, b := range parts {
			vals[j] = b.Classes()[i].UJ / 1000
		}
		bars, err := plotter.NewBarChart(vals, 1.5*vg.Inch)
		if err != nil {
			return nil, size{}, err
		}
		bars.Color = energyColors[i]
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(c.Name, bars)
	}
	for _, b := range parts {
		top = max(top, b.Total()/1000)
	}
	p.Legend.Left = false
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Max = top * 1.15
	// The legend is in the figure's side panel: the frame holds the
	// bars and half a bar's gap on each side.
	p.X.Min, p.X.Max = -0.75, float64(len(parts))-0.25
	return p, size{max(5, 1.5+2*vg.Length(len(parts))) * vg.Inch, 4.5 * vg.Inch}, nil
}

// energyLayerPlot: per layer, the dense and the sparse energy per network
// pass (energy x count), side by side.
func energyLayerPlot(w string, rows []results.LayerResult) (*plot.Plot, size, error) {
	dense := map[string]float64{}
	var names []string
	var d, s plotter.Values
	for _, r := range rows {
		if r.Mode == tensorcore.Dense {
			dense[r.Layer] = r.EnergyUJ * float64(r.Count) / 1000
		}
	}
	for _, r := range rows {
		if dv, ok := dense[r.Layer]; ok && r.Mode == tensorcore.Sparse {
			names = append(names, layerName(r))
			d = append(d, dv)
			s = append(s, r.EnergyUJ*float64(r.Count)/1000)
		}
	}
	if len(names) == 0 {
		return nil, size{}, nil
	}
	p := newPlot(w+": dense vs 2:4-sparse energy per layer", "layer",
		WithPrecision("energy per network pass (mJ)", rows))
	width, height := layerAxis(p, names)
	barW := 0.35 * (width - 1.5*vg.Inch) / vg.Length(len(names))
	for i, v := range []plotter.Values{d, s} {
		bars, err := plotter.NewBarChart(v, barW)
		if err != nil {
			return nil, size{}, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(2*i-1) * barW / 2
		p.Add(bars)
		p.Legend.Add([]string{"dense", "sparse"}[i], bars)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Max = max(maxOf(d), maxOf(s)) * 1.3
	return p, size{width, height}, nil
}

// writeEnergy is report.md's energy table: per workload and mode, the
// energy and average power of one network pass, the energy saving of the
// sparse variant, and the clocks its kernels ran at.
func writeEnergy(b *bytes.Buffer, rep *results.Report) {
	b.WriteString("## Energy (one network pass)\n\n")
	b.WriteString("| workload | mode | energy (mJ) | avg power (W) | " +
		"energy saving | kernel clocks (MHz) |\n|---|---|--:|--:|--:|---|\n")
	for _, t := range rep.Totals {
		lo, hi := 0, 0
		for _, r := range rep.Results {
			if r.Workload == t.Workload && r.Mode == t.Mode {
				if lo == 0 || r.ClockMHz < lo {
					lo = r.ClockMHz
				}
				hi = max(hi, r.ClockMHz)
			}
		}
		clocks := fmt.Sprint(hi)
		if lo != hi {
			clocks = fmt.Sprintf("%d-%d", lo, hi)
		}
		saving := ""
		if t.EnergySaving > 0 {
			saving = fmt.Sprintf("%.3fx", t.EnergySaving)
		}
		fmt.Fprintf(b, "| %s | %s | %.3f | %.1f | %s | %s |\n",
			mdEscape(t.Workload), t.Mode, t.EnergyUJ/1000, t.AvgPowerW,
			dash(saving), clocks)
	}
	b.WriteString("\n")
}
