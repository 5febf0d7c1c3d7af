package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/importer"
	"github.com/stcsim/stcsim/workloads/onnx"

	"github.com/stcsim/stcsim/tensorcore"

	"github.com/stcsim/stcsim/sim"
)

func init() {
	register(&command{name: "trace", summary: "export, import (ONNX, " +
		"profiler trace), list or check GEMM traces", run: runTrace})
}

const traceUsage = "usage: stcsim trace export --workload NAME|FILE [--batch N] [--seq S] " +
	"[--resolution R] [--precision P] [--per-layer] [--format csv|json]\n" +
	"       stcsim trace import FILE.onnx|PROFILE.json [--batch N] [--input NAME=DIMS]... " +
	"[--precision P] [--per-layer] [--weights-out DIR] [--format csv|json]\n" +
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
	case "import":
		return runTraceImport(args[1:])
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
	var llm llmFlags
	llm.add(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	o := workloads.Options{Batch: *batch, Seq: *seq, Resolution: *res,
		PerLayer: *perLayer}
	err := llm.check(fs, []string{*workload}, *batch, *seq)
	if err == nil && workloads.IsLLM(*workload) {
		o = llm.options(*batch, *seq)
		o.PerLayer, o.Resolution = *perLayer, *res
	}
	var t *workloads.Trace
	var sum string
	if err == nil {
		t, sum, err = exportTrace(*workload, o, *precision, *format)
	}
	if err == nil {
		err = checkUnreadFlags(fs, []string{*workload}, false, "export")
	}
	var prov *workloads.TraceProvenance
	if err == nil {
		prov, err = exportProvenance(t, *workload, sum, o, *precision)
	}
	if err == nil && workloads.IsLLM(*workload) {
		prov.Resolution = 0
		llm.source(&prov.Origin, *seq)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim trace export:", flagged(err))
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
		fmt.Fprintln(os.Stderr, "stcsim trace export:", flagged(err))
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
			fmt.Fprintf(os.Stderr, "stcsim trace list: %s: %v\n", n, flagged(err))
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
		if workloads.IsLLM(n) {
			defaults = fmt.Sprintf("prefill, batch %d, seq %d", workloads.DefaultBatch,
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
			if err != nil && !strings.HasPrefix(err.Error(), path+":") { // Where names the file
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "stcsim trace check:", flagged(err))
			code = exitUsage
			continue
		}
		fmt.Printf("%s: ok: %d rows, %s MACs per pass (%s with padding)\n",
			quote.Text(path), len(t.GEMMs), siCount(t.UsefulMACs()), siCount(t.MACs()))
	}
	return code
}

// siCount writes a count with an SI prefix and three significant digits:
// "4.10 k", "12.3 M", "1.20 G", so that a small trace does not read
// "0.000 G".
func siCount(n int64) string {
	v := float64(n)
	for _, p := range []struct {
		scale  float64
		prefix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= p.scale {
			return strconv.FormatFloat(v/p.scale, 'g', 3, 64) + " " + p.prefix
		}
	}
	return strconv.FormatInt(n, 10)
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

// runTraceImport writes the GEMM trace of an ONNX graph or a PyTorch
// profiler trace (workloads/importer) to standard output.
func runTraceImport(args []string) int {
	fs := newFlagSet("trace import", "FILE.onnx|PROFILE.json [flags]")
	batch := fs.Int("batch", 0, "an ONNX graph's symbolic batch dim (first dim of its inputs)")
	var inputs multiFlag
	fs.Var(&inputs, "input", "NAME=DIMS: an ONNX graph input's dims, like input=32x3x224x224 (repeatable)")
	precision := fs.String("precision", "fp16", "fp16, bf16, tf32 or int8")
	perLayer := fs.Bool("per-layer", false, "one row per layer (do not merge identical GEMMs)")
	weightsOut := fs.String("weights-out", "", "write the ONNX file's weights here as .npy, for the weights column")
	format := fs.String("format", "csv", "csv or json")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(paths) != 1 {
		return usageError(fs, "want one model file, got %d", len(paths))
	}
	o, err := importOptions(*batch, inputs, *precision, *format)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	o.PerLayer, o.WeightsDir = *perLayer, *weightsOut
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "weights-out" && fl.Value.String() == "" {
			err = fmt.Errorf("--weights-out: empty path (leave the flag out for none)")
		}
	})
	if err == nil && *weightsOut != "" {
		err = checkOutDir("--weights-out", *weightsOut)
	}
	if err != nil {
		return usageError(fs, "%v", err)
	}
	im, err := importer.Load(paths[0], o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim trace import:", flagged(err))
		return exitUsage
	}
	for _, s := range im.Import.Skipped {
		fmt.Fprintln(os.Stderr, "stcsim trace import: note:", s)
	}
	prov := &workloads.TraceProvenance{Version: sim.Version,
		Command: append([]string{"stcsim", "trace", "import"}, args...),
		Origin: workloads.Origin{Name: im.Trace.Name, Source: paths[0], SHA256: im.SHA256,
			Batch: *batch, Precision: o.Precision.String(), Import: im.Import},
		PerLayer: *perLayer}
	w := bufio.NewWriter(os.Stdout)
	if *format == "json" {
		err = im.Trace.WriteJSONProvenance(w, prov)
	} else {
		err = im.Trace.WriteCSVProvenance(w, prov)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim trace import:", flagged(err))
		return exitInternal
	}
	return exitOK
}

// importOptions checks the import flags.
func importOptions(batch int, inputs []string, precision, format string) (importer.Options, error) {
	var o importer.Options
	if format != "csv" && format != "json" {
		return o, fmt.Errorf("--format %s: want csv or json", configs.Quote(format))
	}
	p, err := tensorcore.ParsePrecision(precision)
	if err != nil {
		return o, fmt.Errorf("--precision: %v", err)
	}
	if batch < 0 || batch > workloads.MaxDim {
		return o, fmt.Errorf("--batch %d: must be in 1..%d", batch, workloads.MaxDim)
	}
	o.Precision, o.Batch = p, batch
	o.Inputs, err = parseInputs(inputs)
	return o, err
}

// parseInputs reads --input NAME=DIMS flags (trace import, run).
func parseInputs(inputs []string) ([]onnx.Input, error) {
	var out []onnx.Input
	for _, in := range inputs {
		name, dims, ok := strings.Cut(in, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--input %s: want NAME=DIMS, like input=32x3x224x224", quote.Q(in))
		}
		var d []int64
		for _, part := range strings.Split(dims, "x") {
			v, err := strconv.ParseInt(part, 10, 64)
			if err != nil || v < 1 || v > workloads.MaxDim {
				return nil, fmt.Errorf("--input %s: dim %s is not a whole number in 1..%d",
					quote.Q(in), quote.Q(part), workloads.MaxDim)
			}
			d = append(d, v)
		}
		for _, prev := range out {
			if prev.Name == name {
				return nil, fmt.Errorf("--input %s given twice", quote.Q(name))
			}
		}
		out = append(out, onnx.Input{Name: name, Dims: d})
	}
	return out, nil
}
