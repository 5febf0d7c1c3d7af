package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/stcsim/stcsim/cmd/stcsim/internal/observe"
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/progress"
	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/importer"
	"github.com/stcsim/stcsim/workloads/onnx"
)

// Defaults of the main job (stcsim run with no flags).
var defaultWorkloads = []string{"resnet50", "bert-large"}

const (
	defaultBatch = 32
	defaultSeq   = 128
)

func init() {
	register(&command{name: "run", summary: "simulate workloads or GEMMs " +
		"dense and sparse and report per-layer results", run: runRun})
}

type runFlags struct {
	cf        configFlags
	workloads multiFlag
	gemms     multiFlag
	inputs    multiFlag // --input NAME=DIMS of ONNX graphs
	batch     int
	batchSet  bool // --batch given: it then applies to --gemm too
	seq       int
	precision string
	operand   string
	layout    string
	mode      string
	format    string
	out       string
	quiet     bool
	wide      bool   // --wide: every table column, whatever the width
	layer     string // --layer: keep only the layers whose name matches
	monitor   bool
	hold      bool
	traceDB   string
	traceAll  bool
	maxWork   float64
	maxMemory float64
	monURL    string // the monitor's address, once started
	cache     cacheFlags
	llm       llmFlags
	train     passFlags
}

func (f *runFlags) add(fs *flag.FlagSet) {
	f.cf.add(fs)
	f.cache.add(fs)
	f.llm.add(fs)
	f.train.add(fs)
	fs.Var(&f.workloads, "workload", "model ("+strings.Join(workloads.Models(), ", ")+
		") or trace file (CSV/JSON); repeatable (default resnet50 and bert-large)")
	fs.Var(&f.gemms, "gemm", "one GEMM MxNxK (M: rows of sparse A, N: "+
		"tokens x batch, K: reduction); repeatable, each shape once")
	fs.IntVar(&f.batch, "batch", defaultBatch, "batch size of model workloads; "+
		"with --gemm, given explicitly, the number of GEMMs in one batched "+
		"kernel (trace files carry their own batch column)")
	fs.IntVar(&f.seq, "seq", defaultSeq, "sequence length of BERT models and of "+
		"the decoder LLMs' prefill")
	fs.Var(&f.inputs, "input", "NAME=DIMS: the dims of an ONNX graph's input, "+
		"e.g. input=8x3x224x224 (as stcsim trace import --input); repeatable")
	fs.StringVar(&f.precision, "precision", "", "fp16, bf16, tf32 or int8 "+
		"(FP32/INT32 accumulate); default fp16, or each trace row's own")
	fs.StringVar(&f.operand, "sparse-operand", "", "which operand sparse rows "+
		"prune: weights or activations (run as the transposed GEMM); "+
		"default each trace row's own (weights)")
	fs.StringVar(&f.layout, "layout", "", "operand layout of every row, in CUTLASS "+
		"profiler naming: nn, nt, tn or tt (A's then B's; n column-major, t row-major); "+
		"default each row's own (tn: nn.Linear's, both operands K-contiguous)")
	fs.StringVar(&f.mode, "mode", "both", "dense, sparse or both")
	fs.StringVar(&f.format, "format", "table", "standard output: table, csv or json")
	fs.StringVar(&f.out, "out", "", "directory for results.csv, results.json, "+
		"config.yaml, report.md and plots")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	fs.BoolVar(&f.wide, "wide", false, "table: every column and whole layer names (by default "+
		"the table fits 120 columns, or a wider terminal, and leaves out what does not fit)")
	fs.StringVar(&f.layer, "layer", "", "run only the layers whose name "+
		"matches this regular expression (Go syntax), e.g. 'ffn' or "+
		"'attention\\.(qkv|output)'; totals then cover those layers")
	fs.BoolVar(&f.monitor, "monitor", false, "serve Akita's monitoring UI on 127.0.0.1")
	fs.BoolVar(&f.hold, "monitor-hold", false, "with --monitor: keep the UI "+
		"up after the run until Ctrl-C")
	fs.StringVar(&f.traceDB, "trace-db", "", "record an Akita trace (SQLite "+
		"FILE.sqlite3, for Daisen) of the reported kernel of each GEMM")
	fs.BoolVar(&f.traceAll, "trace-candidates", false, "with --trace-db: "+
		"also trace the kernel-selection samples, marked as candidates")
	addMaxWork(fs, &f.maxWork)
	addMaxMemory(fs, &f.maxMemory)
}

func runRun(args []string) int {
	fs := newFlagSet("run", "[flags]")
	var f runFlags
	f.add(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fs.Visit(func(fl *flag.Flag) { f.batchSet = f.batchSet || fl.Name == "batch" })
	f.train.given(fs)
	if err := f.checkReadFlags(fs); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", flagged(err))
		return exitUsage
	}
	ld, code := f.cf.load()
	if ld == nil {
		return code
	}
	prep, err := f.job(ld.Config)
	if err == nil {
		err = f.checkOutputs()
	}
	if err == nil {
		err = f.checkOutFiles(ld, prep.Job)
	}
	if err == nil { // addPowerCapped follows a locked run: counted and overlapped
		prep.Job.PowerCappedTotals = ld.Config.GPU.ClockPolicy == energy.Locked
		err = checkWork(prep, f.maxWork, "the job")
	}
	if err == nil {
		err = checkMemory(prep, f.maxMemory, "the job")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", flagged(err))
		return exitUsage
	}
	prep.Job.Command = append([]string{"stcsim", "run"}, args...)
	return execute(ld, prep, &f)
}

// checkOutputs checks --out and --trace-db before anything runs.
func (f *runFlags) checkOutputs() error {
	if f.out != "" {
		if err := checkOutDir("--out", f.out); err != nil {
			return err
		}
	}
	if f.hold && !f.monitor {
		return fmt.Errorf("--monitor-hold needs --monitor")
	}
	if f.traceAll && f.traceDB == "" {
		return fmt.Errorf("--trace-candidates needs --trace-db")
	}
	if f.traceDB != "" {
		return checkTracePath(f.traceDB)
	}
	return nil
}

// checkReadFlags refuses --batch and --seq where no workload of the run
// reads them (checkUnreadFlags), and an --out or --trace-db given an
// empty path, which would read as none.
func (f *runFlags) checkReadFlags(fs *flag.FlagSet) error {
	names := f.workloads
	if len(names) == 0 && len(f.gemms) == 0 {
		names = []string{"resnet50", "bert-large"} // the default job
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err == nil && (fl.Name == "out" || fl.Name == "trace-db") && fl.Value.String() == "" {
			err = fmt.Errorf("--%s: empty path (leave the flag out for none)", fl.Name)
		}
	})
	if err != nil {
		return err
	}
	if err := checkUnreadFlags(fs, names, len(f.gemms) > 0, "run"); err != nil {
		return err
	}
	return f.llm.check(fs, names, f.batch, f.seq)
}

// checkOutFiles checks, before anything runs, that the run can replace
// the files of --out (see report.CheckRunDir) and that none of those it
// would replace or remove is an input: a trace, a weights file or a
// config file.
func (f *runFlags) checkOutFiles(ld *configs.Loaded, job sim.Job) error {
	if f.out == "" {
		return nil
	}
	var names []string
	for _, t := range job.Workloads {
		names = append(names, t.Name)
	}
	touched, err := report.CheckRunDir(f.out, report.RunFiles(names))
	if err != nil || len(touched) == 0 {
		return err
	}
	var inputs []string
	for _, w := range f.workloads {
		if !slices.Contains(workloads.Models(), w) {
			inputs = append(inputs, w)
		}
	}
	for _, t := range job.Workloads {
		for _, g := range t.GEMMs {
			if g.Weights != "" {
				inputs = append(inputs, workloads.WeightsFiles(g.Weights)...)
			}
		}
	}
	for _, c := range ld.Files {
		if !strings.HasSuffix(c.Source, " (built-in)") {
			inputs = append(inputs, c.Source)
		}
	}
	for _, in := range inputs {
		for _, p := range touched {
			if sameFile(in, p) {
				return fmt.Errorf("--out %s: the run would replace or remove %s, "+
					"which is the input %s; choose another --out", f.out, p, in)
			}
		}
	}
	return nil
}

// job turns the flags into the workloads and modes to simulate, through
// the front door (sim.Prepare): checked, shaped and ranked once.
func (f *runFlags) job(cfg *configs.Config) (*sim.Prepared, error) {
	job, err := f.flagJob()
	if err != nil {
		return nil, err
	}
	return sim.Prepare(cfg, job)
}

// flagJob is the job the flags name, not yet checked.
func (f *runFlags) flagJob() (sim.Job, error) {
	var job sim.Job
	modes, err := parseModes(f.mode)
	if err != nil {
		return job, err
	}
	job.Modes = modes
	if err := f.checkScalars(); err != nil {
		return job, err
	}
	prec, err := f.parsePrecision()
	if err != nil {
		return job, err
	}
	names := f.workloads
	if len(names) == 0 && len(f.gemms) == 0 {
		names = defaultWorkloads
	}
	inputs, err := parseInputs(f.inputs)
	if err != nil {
		return job, err
	}
	importBatch := f.batch
	if len(inputs) > 0 && !f.batchSet {
		importBatch = 0 // the --input dims say the batch
	}
	given := map[string]string{} // workload name -> the --workload value
	for _, n := range names {
		t, sum, imp, err := f.resolve(n, importBatch, inputs)
		if err != nil {
			return job, err
		}
		printImportNotes(n, imp)
		if prev, dup := given[t.Name]; dup {
			return job, duplicateWorkload(prev, n, t.Name)
		}
		given[t.Name] = n
		job.Workloads = append(job.Workloads, t)
		src := f.workloadSource(n, t.Name, sum, prec)
		if src.Import = imp; imp != nil && imp.Format == importer.FormatONNX {
			src.Batch = graphBatch(imp, f.batch)
		}
		job.Sources = append(job.Sources, src)
	}
	if len(f.gemms) > 0 {
		batch := 1
		if f.batchSet {
			batch = f.batch
		}
		t, err := workloads.GEMMTrace(f.gemms, prec, slices.Contains(modes, tensorcore.Sparse), batch)
		if err != nil {
			return job, fmt.Errorf("--gemm: %w", err)
		}
		if prev, dup := given[t.Name]; dup {
			return job, duplicateWorkload(prev, "--gemm", t.Name)
		}
		job.Workloads = append(job.Workloads, t)
		job.Sources = append(job.Sources, sim.WorkloadSource{Name: t.Name,
			Source: "gemm", Batch: batch, Precision: prec.String()})
	}
	if err := f.filterLayers(&job); err != nil {
		return job, err
	}
	for i, t := range job.Workloads {
		if f.precision != "" {
			if t, err = t.WithPrecision(prec); err != nil {
				return job, fmt.Errorf("--precision: %v", err)
			}
		}
		if t, err = f.sparseOperand(t); err != nil {
			return job, err
		}
		if job.Workloads[i], err = f.withLayout(t); err != nil {
			return job, err
		}
	}
	if err := f.train.apply(&job); err != nil {
		return job, err
	}
	return job, nil
}

// printImportNotes says on stderr what the import of a model file left
// out or assumed (a layer run on a generated 2:4 pattern, a skipped
// operator), as stcsim trace import does.
func printImportNotes(value string, imp *workloads.Import) {
	if imp == nil {
		return
	}
	for _, s := range imp.Skipped {
		fmt.Fprintf(os.Stderr, "stcsim run: note: %s: %s\n", value, s)
	}
}

// graphBatch is the batch an ONNX graph was imported at: the first dim of
// its activation inputs as used (NAME=DIMS), when they agree, else the
// run's --batch.
func graphBatch(imp *workloads.Import, batch int) int {
	got := 0
	for _, in := range imp.Inputs {
		_, dims, _ := strings.Cut(in, "=")
		first, _, _ := strings.Cut(dims, "x")
		n, err := strconv.Atoi(first)
		if err != nil || (got != 0 && n != got) {
			return batch
		}
		got = n
	}
	if got == 0 {
		return batch
	}
	return got
}

// filterLayers keeps the layers that --layer matches; a workload left
// without layers is dropped, and a pattern that matches nothing is an
// error that lists some of the names it could have matched.
func (f *runFlags) filterLayers(job *sim.Job) error {
	if f.layer == "" {
		return nil
	}
	re, err := regexp.Compile(f.layer)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) { // its Expr can be the whole (long) pattern
			err = fmt.Errorf("error parsing regexp: %s: %s", se.Code, quote.Q(se.Expr))
		}
		return fmt.Errorf("--layer %s: %v", quote.Q(f.layer), err)
	}
	var kept []*workloads.Trace
	var sources []sim.WorkloadSource
	var names []string
	for i, t := range job.Workloads {
		sel := t.WithGEMMs(nil)
		for _, g := range t.GEMMs {
			names = append(names, g.Name)
			if re.MatchString(g.Name) {
				sel.GEMMs = append(sel.GEMMs, g)
			}
		}
		if len(sel.GEMMs) > 0 {
			kept = append(kept, sel)
			sources = append(sources, job.Sources[i])
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("--layer %s matches no layer (layers: %s)", configs.Quote(f.layer),
			strings.Join(names[:min(len(names), 8)], ", "))
	}
	for i := range sources {
		sources[i].Layers = f.layer
	}
	job.Workloads, job.Sources = kept, sources
	return nil
}

// workloadSource records where a --workload value came from: a model
// with its options, or a trace file with the SHA-256 of the bytes it was
// parsed from (sum, from loadWorkload).
func (f *runFlags) workloadSource(value, name, sum string, prec tensorcore.Precision) sim.WorkloadSource {
	if slices.Contains(workloads.Models(), value) {
		src := sim.WorkloadSource{Name: name, Source: "model", Batch: f.batch,
			Precision: prec.String()}
		if workloads.IsLLM(value) {
			f.llm.source(&src, f.seq)
		} else if strings.HasPrefix(value, "bert") {
			src.Seq = f.seq
		} else {
			src.Resolution = workloads.DefaultResolution
		}
		return src
	}
	return sim.WorkloadSource{Name: name, Source: value, SHA256: sum,
		Precision: f.precision}
}

// resolve reads a --workload value: a decoder LLM at the LLM flags,
// else a built-in model, a model file or a trace (importer.Resolve).
func (f *runFlags) resolve(n string, importBatch int, inputs []onnx.Input) (*workloads.Trace, string, *workloads.Import, error) {
	if workloads.IsLLM(n) {
		t, err := workloads.Build(n, f.llm.options(f.batch, f.seq))
		return t, "", nil, err
	}
	return importer.Resolve(n, importBatch, f.seq, inputs)
}

// sparseOperand gives every sparse row the --sparse-operand, if set.
func (f *runFlags) sparseOperand(t *workloads.Trace) (*workloads.Trace, error) {
	switch f.operand {
	case "":
		return t, nil
	case workloads.OperandWeights, workloads.OperandActivations:
	default:
		return nil, fmt.Errorf("--sparse-operand %s: want %s or %s", configs.Quote(f.operand),
			workloads.OperandWeights, workloads.OperandActivations)
	}
	out := t.WithGEMMs(slices.Clone(t.GEMMs))
	for i := range out.GEMMs {
		if out.GEMMs[i].Sparsity != workloads.Dense {
			out.GEMMs[i].SparseOperand = f.operand
		}
	}
	return out, nil
}

// withLayout gives every row the --layout, if set.
func (f *runFlags) withLayout(t *workloads.Trace) (*workloads.Trace, error) {
	if f.layout == "" {
		return t, nil
	}
	if !slices.Contains(workloads.Layouts(), f.layout) {
		return nil, fmt.Errorf("--layout %s: want one of %s", configs.Quote(f.layout),
			strings.Join(workloads.Layouts(), ", "))
	}
	out := t.WithGEMMs(slices.Clone(t.GEMMs))
	for i := range out.GEMMs {
		out.GEMMs[i].Layout = f.layout
	}
	return out, nil
}

// parsePrecision reads --precision; fp16 when it is not given.
func (f *runFlags) parsePrecision() (tensorcore.Precision, error) {
	if f.precision == "" {
		return tensorcore.FP16, nil
	}
	p, err := tensorcore.ParsePrecision(f.precision)
	if err != nil {
		return p, fmt.Errorf("--precision: %v", err)
	}
	return p, nil
}

func (f *runFlags) checkScalars() error {
	if _, err := f.parsePrecision(); err != nil {
		return err
	}
	if f.batch < 1 {
		return fmt.Errorf("--batch %d: must be >= 1", f.batch)
	}
	if f.seq < 1 {
		return fmt.Errorf("--seq %d: must be >= 1", f.seq)
	}
	switch f.format {
	case "table", "csv", "json":
	default:
		return fmt.Errorf("--format %s: want table, csv or json", configs.Quote(f.format))
	}
	return nil
}

// parseModes reads --mode: a mode name or "both".
func parseModes(m string) ([]tensorcore.Mode, error) {
	if m == "both" {
		return tensorcore.Modes, nil
	}
	mode, err := tensorcore.ParseMode(m)
	if err != nil {
		return nil, fmt.Errorf("--mode %s: want dense, sparse or both", configs.Quote(m))
	}
	return []tensorcore.Mode{mode}, nil
}

// duplicateWorkload is the error of two workloads with one name: the
// results and totals are keyed by workload name.
func duplicateWorkload(first, second, name string) error {
	if first == second {
		return fmt.Errorf("--workload %s given twice: each workload runs "+
			"once (a trace's count column repeats a layer)", first)
	}
	return fmt.Errorf("--workload %s and %s are both named %s: workload "+
		"names must be unique in a run (rename one: a JSON trace's \"name\", "+
		"a CSV trace's file name)", first, second, configs.Quote(name))
}

// observe sets up --monitor and --trace-db; the returned function
// finishes them after the run.
func (f *runFlags) observe(job *sim.Job) (func(), error) {
	var obs observe.List
	var trace *observe.Tracer
	if f.traceDB != "" {
		if err := checkTracePath(f.traceDB); err != nil { // again: just before it is made
			return nil, err
		}
		var err error
		if trace, err = observe.NewTracer(f.traceDB, f.traceAll); err != nil {
			return nil, err
		}
		obs = append(obs, trace)
	}
	if f.monitor {
		mon, url, err := observe.StartMonitor()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "stcsim: monitor at %s\n", url)
		obs = append(obs, mon)
		f.monURL = url
	}
	if len(obs) > 0 {
		job.Observer = obs
	}
	return func() {
		if trace != nil {
			if err := trace.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "stcsim: --trace-db:", flagged(err))
				return
			}
			fmt.Fprintf(os.Stderr, "stcsim: trace written to %s (open with daisen -sqlite %s)\n",
				f.traceDB, f.traceDB)
		}
	}, nil
}

// execute runs the job and writes the outputs.
func execute(ld *configs.Loaded, prep *sim.Prepared, f *runFlags) int {
	job := &prep.Job
	finish, err := f.observe(job)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", flagged(err))
		return exitUsage
	}
	if err := f.cache.attach("run", job); err != nil {
		finish()
		fmt.Fprintln(os.Stderr, "stcsim run:", flagged(err))
		return exitUsage
	}
	bar := progress.New(0, "GEMMs simulated", f.quiet)
	job.Progress = func(done, total int) { bar.Set(done, total) }
	est := prep.KSteps()
	bar.Work(workMeter(est))
	bar.Fraction(workShare(est))
	rep, err := prep.Run(ld)
	if err != nil {
		bar.Stop()
	} else {
		bar.Done()
	}
	if err == nil {
		err = f.addPowerCapped(ld, *job, rep)
	}
	finish()
	if err == nil {
		err = report.CheckFinite(rep)
		reportCache("run", job.Cache, f.quiet)
		reportTier("run", ld, rep, f.quiet)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", flagged(err))
		return exitInternal
	}
	if f.out != "" {
		if err := report.WriteRun(f.out, rep, ld); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim run:", flagged(err))
			return exitInternal
		}
	}
	switch f.format {
	case "json":
		os.Stdout.Write(report.JSON(rep))
	case "csv":
		os.Stdout.Write(results.CSV(rep))
	default:
		report.TableWithin(os.Stdout, rep, f.tableWidth())
	}
	if f.hold {
		holdMonitor(f.monURL)
	}
	return exitOK
}

// addPowerCapped gives a locked run with kernels above the board's power
// limit its totals under power_capped too (sim.AddPowerCapped): the
// clock the board would hold them at.
func (f *runFlags) addPowerCapped(ld *configs.Loaded, job sim.Job, rep *sim.Report) error {
	if ld.Config.GPU.ClockPolicy != energy.Locked || !slices.ContainsFunc(rep.Results,
		func(r sim.LayerResult) bool { return r.AbovePowerLimit }) {
		return nil
	}
	load := func(sets ...string) (*configs.Loaded, error) {
		return configs.Load(f.cf.configs, append(slices.Clone([]string(f.cf.sets)), sets...))
	}
	bar := progress.New(0, "above the power limit, re-timed power-capped", f.quiet)
	err := sim.AddPowerCapped(load, job, rep, func(done, total int) { bar.Set(done, total) })
	if err != nil {
		bar.Stop()
		return err
	}
	bar.Done()
	return nil
}

// tableWidth is the width the table keeps to: report.TableWidth, or the
// terminal's when stdout is a wider one; 0 (every column) under --wide.
func (f *runFlags) tableWidth() int {
	if f.wide {
		return 0
	}
	return max(report.TableWidth, progress.TerminalWidth(os.Stdout))
}

// holdMonitor keeps the process (and so the monitor) up until Ctrl-C or
// SIGTERM.
func holdMonitor(url string) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	fmt.Fprintf(os.Stderr, "stcsim: run finished; the monitor stays up at "+
		"%s until Ctrl-C\n", url)
	<-sigs
}
