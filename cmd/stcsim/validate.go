package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/progress"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
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
	var cache cacheFlags
	cache.add(fs)
	points := fs.String("points", "", "measurements file (format of validation/points/a100-public.csv)")
	format := fs.String("format", "table", "table or json")
	maxMAPE := fs.Float64("max-mape", 0, "exit 1 when any kind's MAPE exceeds this many percent (0: report only)")
	calibrated := fs.String("calibrated", strings.Join(validation.DefaultCalibrated, ","),
		"comma-separated row ids (ID, or ID:dense / ID:sparse for one mode) used for calibration (the rest are held out)")
	saveSummary := fs.String("save-summary", "", "with every row run: write the summary as the points file's stored full table (FILE; see --summary-label), which runs of a subset restate")
	summaryLabel := fs.String("summary-label", "", "what --save-summary records as the table's origin (the commit and date)")
	fixedCosts := fs.Bool("fixed-costs", false, "split each GEMM row's simulated time into its fixed part and the steady mainloop (one more simulation per row and mode, at twice the K)")
	conds := fs.String("conditions", "both", "GEMM rows: measured (each under the clock and power limit it was measured at), boost (at the config's locked boost clock), or both (measured as the error, boost beside it)")
	quiet := fs.Bool("quiet", false, "no progress output")
	rows := fs.String("rows", "", "run only the rows whose id matches this regular expression")
	kinds := fs.String("kind", "", "run only rows of these kinds, comma-separated (peak, latency, bandwidth, launch, mma, gemm)")
	var maxWork float64
	addMaxWork(fs, &maxWork)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *points == "" {
		fmt.Fprintln(os.Stderr, "stcsim validate: --points FILE is required")
		return exitUsage
	}
	if *format != "table" && *format != "json" {
		fmt.Fprintf(os.Stderr, "stcsim validate: --format %s: want table or json\n", configs.Quote(*format))
		return exitUsage
	}
	if !(maxWork > 0) || math.IsInf(maxWork, 1) {
		fmt.Fprintf(os.Stderr, "stcsim validate: --max-work %g: must be a finite number > 0\n", maxWork)
		return exitUsage
	}
	if !(*maxMAPE >= 0) || math.IsInf(*maxMAPE, 0) {
		fmt.Fprintln(os.Stderr, "stcsim validate: --max-mape must be a finite number >= 0")
		return exitUsage
	}
	if !slices.Contains(validation.ConditionModes, *conds) {
		fmt.Fprintf(os.Stderr, "stcsim validate: --conditions %s: want %s\n",
			configs.Quote(*conds), strings.Join(validation.ConditionModes, ", "))
		return exitUsage
	}
	pts, err := validation.LoadPoints(*points)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim validate:", flagged(err))
		return exitUsage
	}
	if err := checkCalibrated(fs, pts, splitList(*calibrated)); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim validate:", flagged(err))
		return exitUsage
	}
	all := len(pts)
	if pts, err = validation.Select(pts, *rows, splitList(*kinds)); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim validate:", flagged(err))
		return exitUsage
	}
	if *saveSummary != "" && (len(pts) < all || *summaryLabel == "") {
		fmt.Fprintln(os.Stderr, "stcsim validate: --save-summary needs every row (no --rows "+
			"or --kind) and a --summary-label")
		return exitUsage
	}
	if *saveSummary != "" {
		// Checked before anything runs: a file that can be replaced whole,
		// not a link, not the points file or a config being read.
		if err := checkOutput("--save-summary", *saveSummary, append([]string{*points}, cf.configs...)...); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim validate:", flagged(err))
			return exitUsage
		}
	}
	if len(pts) < all && !*quiet {
		fmt.Fprintf(os.Stderr, "stcsim validate: a subset: %d of the %d rows of %s; its "+
			"errors are not the model's (docs/validation.md has the full held-out table)\n",
			len(pts), all, *points)
	}
	if !*quiet {
		if n := validation.CountCalibrated(pts, splitList(*calibrated)); n == 0 {
			fmt.Fprintf(os.Stderr, "stcsim validate: note: no row of %s is a calibration "+
				"row (--calibrated %s): every prediction is reported as held out\n",
				*points, *calibrated)
		}
	}
	sc, salt, err := cache.openKeyed("validate")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim validate:", flagged(err))
		return exitUsage
	}
	var simCache sim.Cache
	if sc != nil {
		simCache = sc // a nil *simcache.Cache would be a non-nil interface
	}
	bar := progress.New(0, "validation GEMMs simulated", *quiet)
	bar.Work(workMeter(0))
	rep, err := validation.Run(pts, validation.Options{Configs: cf.configs,
		Sets: cf.sets, Calibrated: splitList(*calibrated), MaxWork: maxWork,
		Conditions: *conds, FixedCosts: *fixedCosts, Cache: simCache, CacheSalt: salt,
		Progress: func(done, total int) { bar.Set(done, total) }})
	if err != nil {
		bar.Stop()
		fmt.Fprintln(os.Stderr, "stcsim validate:", flagged(err))
		return exitUsage
	}
	bar.Done()
	reportCache("validate", simCache, *quiet)
	return writeValidation(rep, validationOutput{points: *points, format: *format,
		subset: len(pts) < all, saveSummary: *saveSummary, summaryLabel: *summaryLabel,
		maxMAPE: *maxMAPE})
}

// validationOutput is what validate writes and how: the points file the
// report names, the format, whether the rows were a subset (then the
// stored full table follows), --save-summary and --max-mape.
type validationOutput struct {
	points, format            string
	subset                    bool
	saveSummary, summaryLabel string
	maxMAPE                   float64
}

// writeValidation writes the report to stdout, the stored full table
// with --save-summary, and says whether a kind's MAPE exceeds --max-mape.
func writeValidation(rep *validation.Report, o validationOutput) int {
	rep.Provenance.Command = os.Args
	rep.Provenance.Points = o.points
	if data, err := os.ReadFile(o.points); err == nil {
		rep.Provenance.PointsSHA256 = fmt.Sprintf("%x", sha256.Sum256(data))
	}
	if o.format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			fmt.Fprintln(os.Stderr, "stcsim validate: encode report:", flagged(err))
			return exitInternal
		}
		os.Stdout.Write(append(b, '\n'))
	} else {
		validation.WriteTable(os.Stdout, rep)
		if o.subset {
			validation.WriteFullTable(os.Stdout, o.points)
		}
	}
	if o.saveSummary != "" {
		if err := validation.SaveFullTable(o.saveSummary, o.summaryLabel, rep); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim validate: --save-summary:", flagged(err))
			return exitInternal
		}
	}
	if kind, worst := rep.MaxMAPE(); o.maxMAPE > 0 && 100*worst > o.maxMAPE {
		fmt.Fprintf(os.Stderr, "stcsim validate: %s MAPE %.1f%% exceeds --max-mape %g%%\n",
			kind, 100*worst, o.maxMAPE)
		return exitInternal
	}
	return exitOK
}

// checkCalibrated requires every id given with --calibrated to name a
// row of the points file (the default list names rows of
// a100-public.csv and is not checked against other files).
func checkCalibrated(fs *flag.FlagSet, pts []validation.Point, ids []string) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "calibrated" })
	if !given {
		return nil
	}
	have := map[string]bool{}
	for _, p := range pts {
		have[p.ID] = true
	}
	for _, id := range ids {
		if base, m, ok := strings.Cut(id, ":"); ok {
			if _, err := tensorcore.ParseMode(m); err != nil {
				return fmt.Errorf("--calibrated: %s: want ID or ID:dense / ID:sparse", configs.Quote(id))
			}
			id = base
		}
		if !have[id] {
			return fmt.Errorf("--calibrated: no row with id %q in the "+
				"points file", id)
		}
	}
	return nil
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
