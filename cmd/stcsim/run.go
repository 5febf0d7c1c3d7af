package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/progress"
	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
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
	batch     int
	seq       int
	precision string
	mode      string
	format    string
	out       string
	quiet     bool
	monitor   bool
	hold      bool
	traceDB   string
	traceAll  bool
	maxWork   float64
	monURL    string // the monitor's address, once started
}

func (f *runFlags) add(fs *flag.FlagSet) {
	f.cf.add(fs)
	fs.Var(&f.workloads, "workload", "model ("+strings.Join(workloads.Models(), ", ")+
		") or trace file (CSV/JSON); repeatable (default resnet50 and bert-large)")
	fs.Var(&f.gemms, "gemm", "one GEMM MxNxK (M: rows of sparse A, N: "+
		"tokens x batch, K: reduction); repeatable")
	fs.IntVar(&f.batch, "batch", defaultBatch, "batch size of model workloads")
	fs.IntVar(&f.seq, "seq", defaultSeq, "sequence length of BERT models")
	fs.StringVar(&f.precision, "precision", "", "fp16, bf16, tf32 or int8 "+
		"(FP32/INT32 accumulate); default fp16, or each trace row's own")
	fs.StringVar(&f.mode, "mode", "both", "dense, sparse or both")
	fs.StringVar(&f.format, "format", "table", "standard output: table, csv or json")
	fs.StringVar(&f.out, "out", "", "directory for results.csv, results.json, "+
		"config.yaml, report.md and plots")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	fs.BoolVar(&f.monitor, "monitor", false, "serve Akita's monitoring UI on 127.0.0.1")
	fs.BoolVar(&f.hold, "monitor-hold", false, "with --monitor: keep the UI "+
		"up after the run until Ctrl-C")
	fs.StringVar(&f.traceDB, "trace-db", "", "record an Akita trace (SQLite "+
		"FILE.sqlite3, for Daisen) of the reported kernel of each GEMM")
	fs.BoolVar(&f.traceAll, "trace-candidates", false, "with --trace-db: "+
		"also trace the kernel-selection samples, marked as candidates")
	addMaxWork(fs, &f.maxWork)
}

func runRun(args []string) int {
	fs := newFlagSet("run", "[flags]")
	var f runFlags
	f.add(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	ld, code := f.cf.load()
	if ld == nil {
		return code
	}
	job, err := f.job(ld.Config)
	if err == nil {
		err = f.checkOutputs()
	}
	if err == nil {
		err = checkWork(ld.Config, job, f.maxWork, "the job")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", err)
		return exitUsage
	}
	return execute(ld, job, &f)
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

// job turns the flags into the workloads and modes to simulate.
func (f *runFlags) job(cfg *configs.Config) (sim.Job, error) {
	var job sim.Job
	modes, err := parseModes(f.mode)
	if err != nil {
		return job, err
	}
	job.Modes = modes
	if err := f.checkScalars(); err != nil {
		return job, err
	}
	names := f.workloads
	if len(names) == 0 && len(f.gemms) == 0 {
		names = defaultWorkloads
	}
	for _, n := range names {
		t, err := loadWorkload(n, f.batch, f.seq)
		if err != nil {
			return job, err
		}
		job.Workloads = append(job.Workloads, t)
	}
	prec, err := f.parsePrecision()
	if err != nil {
		return job, err
	}
	if len(f.gemms) > 0 {
		t, err := gemmTrace(f.gemms, prec, slices.Contains(modes, tensorcore.Sparse))
		if err != nil {
			return job, err
		}
		job.Workloads = append(job.Workloads, t)
	}
	if f.precision != "" {
		for i, t := range job.Workloads {
			if job.Workloads[i], err = t.WithPrecision(prec); err != nil {
				return job, fmt.Errorf("--precision: %v", err)
			}
		}
	}
	return job, sim.Check(cfg, job)
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
		return fmt.Errorf("--format %q: want table, csv or json", f.format)
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
		return nil, fmt.Errorf("--mode %q: want dense, sparse or both", m)
	}
	return []tensorcore.Mode{mode}, nil
}

// loadWorkload resolves a --workload value: a model name or a trace file.
func loadWorkload(name string, batch, seq int) (*workloads.Trace, error) {
	for _, m := range workloads.Models() {
		if m == name {
			return workloads.Model(name, batch, seq)
		}
	}
	if _, err := os.Stat(name); err != nil {
		return nil, fmt.Errorf("--workload %q: not a model (%s) and not a "+
			"readable trace file", name, strings.Join(workloads.Models(), ", "))
	}
	return workloads.Load(name)
}

// gemmTrace makes the "gemm" workload of the --gemm flags: rows of the
// precision's sparsity when the run is sparse, dense rows otherwise (a
// dense run does not ask K to be a whole number of sparsity groups).
func gemmTrace(specs []string, precision tensorcore.Precision, sparse bool) (*workloads.Trace, error) {
	sparsity := workloads.Dense
	if sparse {
		sparsity = workloads.SparsityFor(precision)
	}
	t := &workloads.Trace{Name: "gemm"}
	for _, s := range specs {
		m, n, k, err := workloads.ParseGEMM(s)
		if err != nil {
			return nil, fmt.Errorf("--gemm %q: %v", s, err)
		}
		t.GEMMs = append(t.GEMMs, workloads.GEMM{
			Name: fmt.Sprintf("%dx%dx%d", m, n, k), M: m, N: n, K: k,
			Precision: precision, Sparsity: sparsity, Count: 1, Batch: 1})
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("--gemm: %v", err)
	}
	return t, nil
}

// observe sets up --monitor and --trace-db; the returned function
// finishes them after the run.
func (f *runFlags) observe(job *sim.Job) (func(), error) {
	var obs observers
	var trace *traceObserver
	if f.traceDB != "" {
		var err error
		if trace, err = newTraceObserver(f.traceDB, f.traceAll); err != nil {
			return nil, err
		}
		obs = append(obs, trace)
	}
	if f.monitor {
		mon, url, err := startMonitor()
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
			trace.close()
			fmt.Fprintf(os.Stderr, "stcsim: trace written to %s (open with daisen -sqlite %s)\n",
				f.traceDB, f.traceDB)
		}
	}, nil
}

// execute runs the job and writes the outputs.
func execute(ld *configs.Loaded, job sim.Job, f *runFlags) int {
	finish, err := f.observe(&job)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", err)
		return exitUsage
	}
	bar := progress.New(0, "GEMMs simulated", f.quiet)
	job.Progress = func(done, total int) { bar.Set(done, total) }
	rep, err := sim.Run(ld, job)
	bar.Done()
	finish()
	if err == nil {
		err = report.CheckFinite(rep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim run:", err)
		return exitInternal
	}
	if f.out != "" {
		if err := report.WriteRun(f.out, rep, ld); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim run:", err)
			return exitInternal
		}
	}
	switch f.format {
	case "json":
		os.Stdout.Write(report.JSON(rep))
	case "csv":
		os.Stdout.Write(report.CSV(rep))
	default:
		report.Table(os.Stdout, rep)
	}
	if f.hold {
		holdMonitor(f.monURL)
	}
	return exitOK
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
