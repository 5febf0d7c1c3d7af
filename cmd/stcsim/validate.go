package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/progress"
	"github.com/stcsim/stcsim/validation"
)

func init() {
	register(&command{name: "validate", summary: "compare the simulator " +
		"with measured points (peaks, latencies, bandwidths, GEMMs)",
		run: runValidate})
}

func runValidate(args []string) int {
	fs := newFlagSet("validate", "--points FILE.csv [flags]")
	var cf configFlags
	cf.add(fs)
	points := fs.String("points", "", "measurements file (format of validation/points/a100-public.csv)")
	format := fs.String("format", "table", "table or json")
	maxMAPE := fs.Float64("max-mape", 0, "exit 1 when any kind's MAPE exceeds this many percent (0: report only)")
	calibrated := fs.String("calibrated", strings.Join(validation.DefaultCalibrated, ","),
		"comma-separated row ids used for calibration (the rest are held out)")
	quiet := fs.Bool("quiet", false, "no progress output")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *points == "" {
		fmt.Fprintln(os.Stderr, "stcsim validate: --points FILE is required")
		return exitUsage
	}
	if *format != "table" && *format != "json" {
		fmt.Fprintf(os.Stderr, "stcsim validate: --format %q: want table or json\n", *format)
		return exitUsage
	}
	if *maxMAPE < 0 {
		fmt.Fprintln(os.Stderr, "stcsim validate: --max-mape must be >= 0")
		return exitUsage
	}
	pts, err := validation.LoadPoints(*points)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim validate:", err)
		return exitUsage
	}
	bar := progress.New(0, "validation GEMMs simulated", *quiet)
	rep, err := validation.Run(pts, validation.Options{Configs: cf.configs,
		Sets: cf.sets, Calibrated: splitList(*calibrated),
		Progress: func(done, total int) { bar.Set(done, total) }})
	bar.Done()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim validate:", err)
		return exitUsage
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		os.Stdout.Write(append(b, '\n'))
	} else {
		writeValidation(os.Stdout, rep)
	}
	if kind, worst := rep.MaxMAPE(); *maxMAPE > 0 && 100*worst > *maxMAPE {
		fmt.Fprintf(os.Stderr, "stcsim validate: %s MAPE %.1f%% exceeds --max-mape %g%%\n",
			kind, 100*worst, *maxMAPE)
		return exitInternal
	}
	return exitOK
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func writeValidation(out io.Writer, rep *validation.Report) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "id\tkind\tconfig\tmeasured\tsimulated\tunit\terror\theld out\tkernel\t\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%.4g\t%.4g\t%s\t%+.1f%%\t%v\t%s\t\n", r.ID,
			r.Kind, r.Config, r.Measured, r.Simulated, r.Unit, 100*r.Error,
			r.HeldOut, r.Kernel)
	}
	w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "kind\tn\tMAPE\theld-out n\theld-out MAPE\tcorrelation\t\n")
	for _, s := range rep.Summary {
		corr := ""
		if s.Correlation != 0 && !math.IsNaN(s.Correlation) {
			corr = fmt.Sprintf("%.3f", s.Correlation)
		}
		fmt.Fprintf(w, "%s\t%d\t%.1f%%\t%d\t%.1f%%\t%s\t\n", s.Kind, s.N,
			100*s.MAPE, s.HeldOutN, 100*s.HeldOutMAPE, corr)
	}
	w.Flush()
	for _, s := range rep.Skipped {
		fmt.Fprintln(out, "skipped:", s)
	}
}
