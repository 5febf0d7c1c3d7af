package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/workloads"

	"github.com/stcsim/stcsim/tensorcore"

	"github.com/stcsim/stcsim/sim"
)

func init() {
	register(&command{name: "trace", summary: "export a built-in model's " +
		"GEMM trace, list the models, or check trace files", run: runTrace})
}

const traceUsage = "usage: stcsim trace export --workload NAME|FILE [--batch N] [--seq S] " +
	"[--resolution R] [--precision P] [--per-layer] [--format csv|json]\n" +
	"       stcsim trace list\n" +
	"       stcsim trace check FILE..."

func runTrace(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, traceUsage)
		return exitUsage
	}
	switch args[0] {
	case "export":
		return runTraceExport(args[1:])
	case "list":
		return runTraceList(args[1:])
	case "check":
		return runTraceCheck(args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(os.Stderr, traceUsage)
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "stcsim trace: unknown subcommand %s\n%s\n", configs.Quote(args[0]), traceUsage)
	return exitUsage
}

func runTraceExport(args []string) int {
	fs := newFlagSet("trace export", "--workload NAME|FILE [flags]")
	workload := fs.String("workload", "", "built-in model ("+
		strings.Join(workloads.Models(), ", ")+") or a trace file to convert")
	batch := fs.Int("batch", workloads.DefaultBatch, "images (ResNet) or sequences (BERT) per pass")
	seq := fs.Int("seq", workloads.DefaultSeq, "BERT sequence length")
	res := fs.Int("resolution", workloads.DefaultResolution, "ResNet input height = width")
	precision := fs.String("precision", "", "fp16, bf16, tf32 or int8 "+
		"(default fp16 for models, each row's own for files)")
	perLayer := fs.Bool("per-layer", false, "one row per layer (do not merge identical GEMMs)")
	format := fs.String("format", "csv", "csv or json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	o := workloads.Options{Batch: *batch, Seq: *seq, Resolution: *res,
		PerLayer: *perLayer}
	t, sum, err := exportTrace(*workload, o, *precision, *format)
	if err == nil {
		err = checkUnreadFlags(fs, []string{*workload}, false, "export")
	}
	var prov *workloads.TraceProvenance
	if err == nil {
		prov, err = exportProvenance(t, *workload, sum, o, *precision)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim trace export:", err)
		return exitUsage
	}
	prov.Command = append([]string{"stcsim", "trace", "export"}, args...)
	w := bufio.NewWriter(os.Stdout)
	if *format == "json" {
		err = t.WriteJSONProvenance(w, prov)
	} else {
		err = t.WriteCSVProvenance(w, prov)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim trace export:", err)
		return exitInternal
	}
	return exitOK
}

// exportProvenance records what the export is made of: a model with the
// options that shaped it, or a trace file with the SHA-256 of the bytes
// it was parsed from (sum, from exportTrace), and the --precision it was
// converted to, if any.
func exportProvenance(t *workloads.Trace, name, sum string, o workloads.Options, precision string) (*workloads.TraceProvenance, error) {
	p := &workloads.TraceProvenance{Version: sim.Version, Origin: workloads.Origin{Name: t.Name}}
	if precision != "" { // exportTrace has parsed it
		prec, err := tensorcore.ParsePrecision(precision)
		if err != nil {
			return nil, fmt.Errorf("--precision: %w", err)
		}
		p.Precision = prec.String()
	}
	if !slices.Contains(workloads.Models(), name) {
		p.Source, p.SHA256 = name, sum
		return p, nil
	}
	p.Source, p.Batch, p.PerLayer = "model", o.Batch, o.PerLayer
	if precision == "" {
		p.Precision = tensorcore.FP16.String() // a model's default
	}
	if strings.HasPrefix(name, "bert") {
		p.Seq = o.Seq
	} else {
		p.Resolution = o.Resolution
	}
	return p, nil
}

// exportTrace builds the model or loads the file to export (with the
// SHA-256 of its bytes; "" for a model); a precision other than ""
// overrides the rows' own.
func exportTrace(name string, o workloads.Options, precision, format string) (*workloads.Trace, string, error) {
	if format != "csv" && format != "json" {
		return nil, "", fmt.Errorf("--format %s: want csv or json", configs.Quote(format))
	}
	if precision != "" {
		var err error
		if o.Precision, err = tensorcore.ParsePrecision(precision); err != nil {
			return nil, "", fmt.Errorf("--precision: %w", err)
		}
	}
	for _, v := range []struct {
		flag string
		v    int
	}{{"--batch", o.Batch}, {"--seq", o.Seq}, {"--resolution", o.Resolution}} {
		if v.v < 1 {
			return nil, "", fmt.Errorf("%s %d: must be >= 1", v.flag, v.v)
		}
	}
	if name == "" {
		return nil, "", fmt.Errorf("--workload is required (a model: %s; or a trace file)",
			strings.Join(workloads.Models(), ", "))
	}
	if slices.Contains(workloads.Models(), name) {
		t, err := workloads.Build(name, o)
		return t, "", err
	}
	if _, err := os.Stat(name); err != nil {
		return nil, "", fmt.Errorf("--workload %s: not a model (%s) and not a "+
			"readable trace file", configs.Quote(name), strings.Join(workloads.Models(), ", "))
	}
	t, sum, err := workloads.LoadSHA256(name)
	if err != nil {
		return nil, "", err
	}
	if precision != "" {
		t, err = t.WithPrecision(o.Precision)
	}
	return t, sum, err
}

func runTraceList(args []string) int {
	fs := newFlagSet("trace list", "")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "model\trows\tGEMMs/pass\tG MACs/pass\tsparse share of MACs\tdefaults")
	for _, n := range workloads.Models() {
		t, err := workloads.Build(n, workloads.Options{})
		if err != nil {
			fmt.Fprintf(os.Stderr, "stcsim trace list: %s: %v\n", n, err)
			return exitInternal
		}
		gemms, sparse := 0, int64(0)
		for _, g := range t.GEMMs {
			gemms += g.Count
			if g.Sparsity != workloads.Dense {
				sparse += g.UsefulMACs() * int64(g.Count)
			}
		}
		defaults := fmt.Sprintf("batch %d, %dx%d", workloads.DefaultBatch,
			workloads.DefaultResolution, workloads.DefaultResolution)
		if strings.HasPrefix(n, "bert") {
			defaults = fmt.Sprintf("batch %d, seq %d", workloads.DefaultBatch,
				workloads.DefaultSeq)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.1f%%\t%s, fp16\n", n, len(t.GEMMs), gemms,
			float64(t.UsefulMACs())/1e9,
			100*float64(sparse)/float64(t.UsefulMACs()), defaults)
	}
	if err := tw.Flush(); err != nil {
		return exitInternal
	}
	return exitOK
}

// runTraceCheck parses trace files, loads the weights their rows name and
// checks the rows against a config as run does (sim.Check).
func runTraceCheck(args []string) int {
	fs := newFlagSet("trace check", "[--config C] [--set k=v] FILE...")
	var cf configFlags
	cf.add(fs)
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		return usageError(fs, "no trace file given")
	}
	ld, code := cf.load()
	if ld == nil {
		return code
	}
	for _, path := range paths {
		t, err := workloads.Load(path)
		if err == nil {
			err = checkRowWeights(t)
		}
		if err == nil {
			err = sim.Check(ld.Config, sim.Job{
				Workloads: []*workloads.Trace{t}, Modes: tensorcore.Modes})
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "stcsim trace check:", err)
			code = exitUsage
			continue
		}
		fmt.Printf("%s: ok: %d rows, %.3f G MACs per pass (%.3f G with padding)\n",
			path, len(t.GEMMs), float64(t.UsefulMACs())/1e9, float64(t.MACs())/1e9)
	}
	return code
}

func checkRowWeights(t *workloads.Trace) error {
	for _, g := range t.GEMMs {
		if g.Weights == "" {
			continue
		}
		if _, err := workloads.LoadRowWeights(g); err != nil {
			return fmt.Errorf("trace %s: %w", t.Name, err)
		}
	}
	return nil
}
