package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/sweep/store"
)

func init() {
	register(&command{name: "plot", summary: "plot sweep results: a " +
		"metric against a grid key or a metric", run: runPlot})
}

func runPlot(args []string) int {
	fs := newFlagSet("plot", "DB --x KEY|METRIC [--y "+strings.ReplaceAll(metricList, ", ", "|")+"] "+
		"[--by workload|layer] [--where KEY=VALUE]... [--out FILE.png|.svg|.pdf] [--title T] [--xlabel L] [--ylabel L] "+
		"[--size WxH] [--font-size PT] [--format png|svg|pdf]")
	x := fs.String("x", "", "grid key on the X axis (lines), or a metric (a scatter of the stored points) (required)")
	y := fs.String("y", "speedup", "metric: "+metricList)
	by := fs.String("by", "workload", "one line per workload or per layer")
	out := fs.String("out", "", "output file, .png, .svg or .pdf (default sweep-Y-vs-X.FORMAT); "+
		"the plot's provenance goes to OUT.json beside it")
	title := fs.String("title", "", "title (default: the metric against the X key, and the --where filter)")
	xlabel := fs.String("xlabel", "", "X axis label (default: the key in words, with its unit)")
	ylabel := fs.String("ylabel", "", "Y axis label (default: the metric's)")
	size := fs.String("size", "8x5.5", "plot area in inches, WxH (the legend panel and caption add to it)")
	fontSize := fs.Float64("font-size", 10, "tick and legend type size in points (labels +2, title +4)")
	format := fs.String("format", "", "png, svg or pdf (default: from --out's extension, else png)")
	var where multiFlag
	fs.Var(&where, "where", "keep only points with this grid value, "+
		"KEY=VALUE (repeatable)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, "want exactly one store, got %d arguments", len(pos))
	}
	if *x == "" {
		return usageError(fs, "--x KEY is required")
	}
	o := report.LineOptions{Title: *title, XLabel: *xlabel, YLabel: *ylabel, FontSize: *fontSize}
	var err error
	if o.WidthIn, o.HeightIn, err = parseSize(*size); err != nil {
		return usageError(fs, "--size %s: %v", configs.Quote(*size), err)
	}
	if *fontSize < 4 || *fontSize > 48 {
		return usageError(fs, "--font-size %g: want 4 to 48 points", *fontSize)
	}
	ext, err := plotFormat(*format, *out)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	q := store.Query{X: *x, Y: *y, By: *by}
	for _, w := range where {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return usageError(fs, "--where %s: want KEY=VALUE", configs.Quote(w))
		}
		q.Where = append(q.Where, point.Assignment{Key: k, Value: v})
	}
	if *out == "" {
		*out = fmt.Sprintf("sweep-%s-vs-%s.%s", *y, fileStem(*x), ext)
	}
	side := *out + ".json"
	for _, f := range []string{*out, side} {
		if err := checkOutFile("--out", f); err != nil {
			return usageError(fs, "%v", err)
		}
		if err := checkNotInput(f, pos[0]); err != nil {
			return usageError(fs, "%v", err)
		}
	}
	rows, err := readRows(pos[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim plot:", flagged(err))
		return exitUsage
	}
	pc, err := store.NewPlotContext(pos[0], selectedRows(rows, q), *x, append([]string{"plot"}, args...), sim.Version)
	if err == nil {
		yGiven := o.YLabel != ""
		fillPlotDefaults(&o, *x, *y, *by, where, pc)
		if !yGiven {
			o.YLabel = report.WithPrecision(o.YLabel, rowRecords(selectedRows(rows, q)))
		}
		labelTier(&o, selectedRows(rows, q))
		err = drawPlot(*out, o, rows, q)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim plot:", flagged(err))
		return exitUsage
	}
	meta, err := json.MarshalIndent(pc, "", "  ")
	if err == nil {
		err = report.WriteAtomic(side, append(meta, '\n'))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim plot:", flagged(err))
		return exitInternal
	}
	fmt.Fprintln(os.Stderr, "wrote", *out, "and", side)
	return exitOK
}

// metricList names the metrics --y (and a scatter's --x) take.
var metricList = strings.Join(slices.Sorted(maps.Keys(store.Metrics)), ", ")

// drawPlot draws lines of Y against a grid key, or a scatter of the
// stored points when X is a metric too.
func drawPlot(out string, o report.LineOptions, rows []store.Row, q store.Query) error {
	if store.IsMetric(q.X) {
		points, err := store.Scatter(rows, q)
		if err != nil {
			return err
		}
		return report.ScatterPlot(out, o, points)
	}
	series, err := store.Series(rows, q)
	if err != nil {
		return err
	}
	return report.LinePlot(out, o, series)
}

// fillPlotDefaults gives the options the plot's own words where the user
// gave none: a title, a readable X label, the metric's Y label, the 1x
// line of a ratio metric, the base config's point and the caption.
func fillPlotDefaults(o *report.LineOptions, x, y, by string, where []string, pc *store.PlotContext) {
	xWords, per := report.KeyWords(x), "one line per "+by
	if store.IsMetric(x) {
		xWords, per = store.Metrics[x], "one point per stored point and "+by
	}
	if o.XLabel == "" {
		o.XLabel = xWords
	}
	if o.YLabel == "" {
		o.YLabel = store.Metrics[y]
	}
	if o.Title == "" {
		o.Title = fmt.Sprintf("%s against %s, %s", store.Metrics[y], xWords, per)
		if len(where) > 0 {
			o.Title += "\n(" + strings.Join(where, ", ") + ")"
		}
	}
	if y == "speedup" || y == "energy_saving" {
		o.RefY, o.RefLabel = 1, "1x: no gain"
	}
	if pc.Baseline != "" {
		o.BaselineX, o.BaselineLabel = pc.Baseline, pc.Base+" default ("+pc.Baseline+")"
	}
	o.Caption = pc.Caption()
}

// labelTier marks a plot with fast-tier records in it (sim.fidelity:
// fast): the title says so and the caption how many records and the
// tier's stated error.
func labelTier(o *report.LineOptions, rows []store.Row) {
	n := 0
	for _, r := range rows {
		if r.Fidelity == configs.FidelityFast {
			n++
		}
	}
	if n == 0 {
		return
	}
	o.Title += " (fast tier)"
	o.Caption = append(o.Caption, fmt.Sprintf("fast tier: %d of %d records timed by sim/fast "+
		"(sim.fidelity: fast), %s; the rest at instruction level", n, len(rows), sim.FastTierError()))
}

// rowRecords are the stored rows' records.
func rowRecords(rows []store.Row) []results.LayerResult {
	out := make([]results.LayerResult, len(rows))
	for i, r := range rows {
		out[i] = r.LayerResult
	}
	return out
}

// selectedRows are the rows a query's --where keeps.
func selectedRows(rows []store.Row, q store.Query) []store.Row {
	var out []store.Row
	for _, r := range rows {
		keep := true
		for _, w := range q.Where {
			v, ok := point.GridValue(r.Grid, w.Key)
			keep = keep && ok && v == w.Value
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

// parseSize reads WxH in inches.
func parseSize(s string) (w, h float64, err error) {
	a, b, ok := strings.Cut(s, "x")
	if ok {
		w, err = strconv.ParseFloat(a, 64)
	}
	if ok && err == nil {
		h, err = strconv.ParseFloat(b, 64)
	}
	if !ok || err != nil || w < 1 || h < 1 || w > 40 || h > 40 {
		return 0, 0, fmt.Errorf("want WxH in inches, each 1 to 40 (e.g. 8x5.5)")
	}
	return w, h, nil
}

// plotFormat is the image format from --format and --out, which must
// agree when both are given.
func plotFormat(format, out string) (string, error) {
	ext := strings.TrimPrefix(filepath.Ext(out), ".")
	switch {
	case format != "" && !slices.Contains([]string{"png", "svg", "pdf"}, format):
		return "", fmt.Errorf("--format %s: want png, svg or pdf", configs.Quote(format))
	case out != "" && !slices.Contains([]string{"png", "svg", "pdf"}, ext):
		return "", fmt.Errorf("--out %s: want a .png, .svg or .pdf file name", out)
	case format != "" && out != "" && ext != format:
		return "", fmt.Errorf("--format %s but --out %s: they disagree", format, out)
	case format != "":
		return format, nil
	case out != "":
		return ext, nil
	}
	return "png", nil
}

func fileStem(s string) string {
	return strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(s)
}
