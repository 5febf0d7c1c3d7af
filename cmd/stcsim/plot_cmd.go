package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/sweep"
)

func init() {
	register(&command{name: "plot", summary: "plot sweep results: a " +
		"metric against one grid key", run: runPlot})
}

func runPlot(args []string) int {
	fs := newFlagSet("plot", "DB --x KEY [--y speedup|time_us|tflops|dram_gbps|energy_uj|avg_power_w|energy_saving|clock_mhz] "+
		"[--by workload|layer] [--where KEY=VALUE]... [--out FILE.png|.svg]")
	x := fs.String("x", "", "grid key on the X axis (required)")
	y := fs.String("y", "speedup", "metric: speedup, time_us, tflops, dram_gbps, energy_uj, avg_power_w, energy_saving or clock_mhz")
	by := fs.String("by", "workload", "one line per workload or per layer")
	out := fs.String("out", "", "output file, .png or .svg (default sweep-Y-vs-X.png)")
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
	q := sweep.Query{X: *x, Y: *y, By: *by}
	for _, w := range where {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return usageError(fs, "--where %q: want KEY=VALUE", w)
		}
		q.Where = append(q.Where, sweep.Assignment{Key: k, Value: v})
	}
	if *out == "" {
		*out = fmt.Sprintf("sweep-%s-vs-%s.png", *y, fileStem(*x))
	}
	if err := checkOutFile("--out", *out); err != nil {
		return usageError(fs, "%v", err)
	}
	if err := checkNotInput(*out, pos[0]); err != nil {
		return usageError(fs, "%v", err)
	}
	rows, err := readRows(pos[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim plot:", err)
		return exitUsage
	}
	series, err := sweep.Series(rows, q)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim plot:", err)
		return exitUsage
	}
	title := fmt.Sprintf("%s against %s, one line per %s",
		sweep.Metrics[*y], axisLabel(*x), *by)
	if len(where) > 0 {
		title += "\n(" + strings.Join(where, ", ") + ")"
	}
	if err := report.LinePlot(*out, title, axisLabel(*x), sweep.Metrics[*y], series); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim plot:", err)
		return exitUsage
	}
	fmt.Fprintln(os.Stderr, "wrote", *out)
	return exitOK
}

func fileStem(s string) string {
	return strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(s)
}

// keyUnits are the units of config keys, by the suffix of their last part.
var keyUnits = []struct{ suffix, unit string }{
	{"_gbps", "GB/s"}, {"_kb", "KB"}, {"_gb", "GB"}, {"_mhz", "MHz"},
	{"bytes_per_clk", "B/clock"}, {"latency", "cycles"},
	{"fma_per_clk", "FMA/clock"}, {"sm_count", "SMs"}, {"_bytes", "B"},
}

// axisLabel is a grid key with its unit, when the key's name implies one.
func axisLabel(key string) string {
	for _, u := range keyUnits {
		if strings.HasSuffix(key, u.suffix) {
			return fmt.Sprintf("%s (%s)", key, u.unit)
		}
	}
	return key
}
