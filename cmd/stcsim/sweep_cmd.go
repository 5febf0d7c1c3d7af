package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tebeka/atexit"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/progress"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/workloads"
)

// exitInterrupted is the status of a sweep stopped by Ctrl-C or SIGTERM
// (128 + SIGINT, as shells report it).
const exitInterrupted = 130

func init() {
	register(&command{name: "sweep", summary: "run a grid of configs over " +
		"workloads into a resumable results store", run: runSweep})
}

// parseArgs parses flags placed before, between or after positional
// arguments and returns the positionals.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagFailure(fs, err), false
		}
		if fs.NArg() == 0 {
			return pos, exitOK, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func usageError(fs *flag.FlagSet, format string, a ...any) int {
	for i, v := range a {
		if err, ok := v.(error); ok {
			a[i] = flagged(err)
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fmt.Fprintf(os.Stderr, "run '%s -h' for usage\n", fs.Name())
	return exitUsage
}

// workloadResolver loads the models and trace files a sweep names.
var workloadResolver = sweep.Resolver{
	Model: workloads.Build,
	Trace: workloads.Load,
}

func runSweep(args []string) int {
	fs := newFlagSet("sweep", "SPEC.yaml [--db FILE] [--jobs N] [--shard i/n] [--refine N] [--quiet]")
	db := fs.String("db", "", "results store (SQLite); default NAME.db "+
		"in the current directory, NAME being the sweep file's")
	jobs := fs.Int("jobs", runtime.NumCPU(), "points simulated at once")
	shard := fs.String("shard", "", "run only the i-th of n deterministic "+
		"shares of the points, i/n with 1 <= i <= n")
	quiet := fs.Bool("quiet", false, "no progress output")
	dryRun := fs.Bool("dry-run", false, "check the sweep and list its points "+
		"without running anything")
	refine := fs.Int("refine", 0, "after a fast sweep (sim.fidelity: fast), re-run its N best "+
		"points (by sparse speedup, or total time in one mode) at sim.fidelity=instruction, "+
		"stored as points of their own, and say how much each moved")
	var maxWork, maxMemory float64
	addMaxWork(fs, &maxWork)
	addMaxMemory(fs, &maxMemory)
	var cache cacheFlags
	cache.add(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, "want exactly one sweep file, got %d arguments", len(pos))
	}
	if *jobs < 1 {
		return usageError(fs, "--jobs %d: must be >= 1", *jobs)
	}
	var sh sweep.Shard
	if *shard != "" {
		var err error
		if sh, err = sweep.ParseShard(*shard); err != nil {
			return usageError(fs, "%v", err)
		}
	}
	if *refine < 0 {
		return usageError(fs, "--refine %d: must be >= 0", *refine)
	}
	if *refine > 0 && *shard != "" {
		return usageError(fs, "--refine and --shard: refine after merging the shards' stores")
	}
	if !(maxWork > 0) {
		return usageError(fs, "--max-work %g: must be > 0", maxWork)
	}
	if !(maxMemory > 0) || math.IsInf(maxMemory, 1) {
		return usageError(fs, "--max-memory %g: must be a finite number > 0", maxMemory)
	}
	if *db == "" {
		*db = strings.TrimSuffix(filepath.Base(pos[0]), filepath.Ext(pos[0])) + ".db"
	}
	// The dry run checks --db as the run would, so that it passing means
	// the run can start.
	if err := checkOutFile("--db", *db); err != nil {
		return usageError(fs, "%v", err)
	}
	spec, err := sweep.Load(pos[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return exitUsage
	}
	sc, salt, err := cache.openKeyed("sweep")
	if err != nil {
		return usageError(fs, "%v", err)
	}
	est := &unitEstimates{work: map[unitKey]float64{}, cache: sc, salt: salt}
	plan, err := spec.PlanChecked(workloadResolver, workCheck(maxWork, maxMemory, *jobs, est))
	if err == nil {
		err = checkShard(plan, sh)
	}
	if err == nil {
		err = sweep.CheckRefinable(plan, *refine)
	}
	if err == nil && *refine > 0 {
		err = checkRefineWork(plan, *refine, maxWork, maxMemory, *jobs)
	}
	if err == nil {
		// An existing store must be one, and must not hold these points
		// with other GEMMs or modes: found now, not after the run starts.
		err = store.CheckStore(*db, sweep.IDs(sh.Select(plan.Units())), plan.Modes)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return exitUsage
	}
	work := est.total(plan.Units())
	if work > warnWork && !*quiet {
		fmt.Fprintf(os.Stderr, "stcsim sweep: warning: estimated work %s "+
			"over all points (spread over --jobs and shards)\n", sim.DescribeWork(work))
	}
	if *dryRun {
		if !*quiet {
			listPoints(plan, sh, *jobs, est)
		}
		return exitOK
	}
	opt := sweep.Options{Jobs: *jobs, Shard: sh}
	var reused cacheTally
	if sc != nil {
		opt.Run = func(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
			job.Cache, job.CacheSalt = sc, salt
			rep, err := sim.Run(ld, job)
			if err == nil {
				reused.add(rep)
			}
			return rep, err
		}
	}
	code = executeSweep(plan, *db, opt, *quiet)
	if code == exitOK && *refine > 0 {
		code = refineSweep(plan, *db, opt, *refine, maxWork, maxMemory, *quiet)
	}
	if sc != nil {
		reportCache("sweep", sc, *quiet)
	}
	return code
}

// refineSweep re-runs the n best points of a finished fast sweep at
// instruction level into the same store and prints how each moved.
func refineSweep(plan *sweep.Plan, db string, opt sweep.Options, n int, maxWork, maxMemory float64, quiet bool) int {
	obj := sweep.ObjectiveOf(plan)
	before, code := storedScores(db, obj)
	if code != exitOK {
		return code
	}
	est := &unitEstimates{work: map[unitKey]float64{}}
	best := obj.Best(plan, before, n)
	refined, err := plan.Refined(best, workCheck(maxWork, maxMemory, opt.Jobs, est))
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return exitUsage
	}
	work := est.total(refined.Units())
	if !quiet {
		fmt.Fprintf(os.Stderr, "stcsim sweep: refining the %d best points by %s at %s=%s (estimated work %s)\n",
			len(refined.Points), obj.Name, point.FidelityKey, configs.FidelityInstruction, sim.DescribeWork(work))
	}
	if code := executeSweep(refined, db, opt, quiet); code != exitOK {
		return code
	}
	after, code := storedScores(db, obj)
	if code != exitOK {
		return code
	}
	fmt.Printf("refined %d of %d points at %s=%s (objective: %s):\n", len(refined.Points),
		len(plan.Points), point.FidelityKey, configs.FidelityInstruction, obj.Name)
	for i, q := range refined.Points {
		pt := best[i]
		f, in := before[pt.Hash], after[q.Hash]
		fmt.Printf("  point %d  %s  fast %.4g  instruction %.4g  (%+.1f %%)  config %s -> %s\n",
			pt.Index+1, pt.Label(), f, in, 100*(in/f-1), pt.Hash, q.Hash)
	}
	return exitOK
}

// checkRefineWork checks, before the fast sweep stores anything, that
// every point fits --max-work and --max-memory at instruction level: any
// of them may be among the n best that --refine re-runs so.
func checkRefineWork(plan *sweep.Plan, n int, maxWork, maxMemory float64, jobs int) error {
	est := &unitEstimates{work: map[unitKey]float64{}}
	if _, err := plan.Refined(plan.Points, workCheck(maxWork, maxMemory, jobs, est)); err != nil {
		return fmt.Errorf("--refine %d re-runs the best points at %s=%s, any of them: %w",
			n, point.FidelityKey, configs.FidelityInstruction, err)
	}
	return nil
}

// storedScores reads the objective of every point in the store.
func storedScores(db string, obj sweep.Objective) (map[string]float64, int) {
	st, err := store.Open(db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return nil, storeExit(err)
	}
	totals, err := st.Totals()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return nil, exitInternal
	}
	return obj.Scores(totals), exitOK
}

// cacheTally clears each record's cache field: the store keeps what was
// simulated, the same whichever run simulated it (the cache's own counts
// say what was reused).
type cacheTally struct{}

func (cacheTally) add(rep *sim.Report) {
	for i := range rep.Results {
		rep.Results[i].Cache = ""
	}
}

// unitKey names a unit of a plan: a point and one of its workloads.
type unitKey struct {
	point    *sweep.Point
	workload *sweep.Workload
}

// unitEstimates are the units' estimated work, as workCheck finds it
// (from several goroutines): the work of the records the cache (when
// there is one) would not serve.
type unitEstimates struct {
	mu    sync.Mutex
	work  map[unitKey]float64
	cache *simcache.Cache
	salt  string
}

// uncached is the estimated work of what a run of the job would
// simulate: its records less those the cache would serve.
func (u *unitEstimates) uncached(ld *configs.Loaded, p *sim.Prepared, whole float64) (float64, error) {
	if u.cache == nil {
		return whole, nil
	}
	p.Job.Cache, p.Job.CacheSalt = u.cache, u.salt
	return p.UncachedWork(ld)
}

func (u *unitEstimates) set(k unitKey, w float64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.work[k] = w
}

func (u *unitEstimates) get(k unitKey) float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.work[k]
}

// total is the units' work summed in their order (the same sum every
// time).
func (u *unitEstimates) total(units []sweep.Unit) float64 {
	t := 0.0
	for _, x := range units {
		t += u.get(unitKey{x.Point, x.Workload})
	}
	return t
}

// workCheck refuses a point whose estimated work for one workload is
// above maxWork, or whose estimated peak memory, jobs of it at once, is
// above maxMemory, and keeps each unit's work in units (for the
// warning's total and the dry run's list: a config is not loaded twice).
func workCheck(maxWork, maxMemory float64, jobs int, units *unitEstimates) sweep.PointCheck {
	return func(pt *sweep.Point, ld *configs.Loaded, ws []*sweep.Workload, preps []*sim.Prepared) error {
		for i, w := range ws {
			prep := preps[i]
			est, mem := prep.Work(), prep.Memory()
			left, err := units.uncached(ld, prep, est)
			if err != nil {
				return fmt.Errorf("point %d (%s) workload %s: %w", pt.Index+1, pt.Label(), w.Trace.Name, err)
			}
			units.set(unitKey{pt, w}, left)
			if mem *= float64(jobs); mem > maxMemory {
				return fmt.Errorf("point %d (%s) workload %s: estimated "+
					"peak memory %s with --jobs %d is above --max-memory %.3g "+
					"bytes; lower --jobs, or raise --max-memory to run it anyway",
					pt.Index+1, pt.Label(), w.Trace.Name, sim.DescribeMemory(mem),
					jobs, maxMemory)
			}
			if est > maxWork {
				return fmt.Errorf("point %d (%s) workload %s: estimated "+
					"work %s is above --max-work %.3g; raise --max-work to "+
					"run it anyway", pt.Index+1, pt.Label(), w.Trace.Name,
					sim.DescribeWork(est), maxWork)
			}
		}
		return nil
	}
}

// checkShard refuses a shard that gets no units.
func checkShard(plan *sweep.Plan, sh sweep.Shard) error {
	if n := len(plan.Units()); len(sh.Select(plan.Units())) == 0 {
		return fmt.Errorf("--shard %d/%d: no units (the sweep has %d)",
			sh.I, sh.N, n)
	}
	return nil
}

// listPoints prints the plan: one line per point of the shard with its
// estimated simulation time (sim.Prepared.Work, as workCheck kept it in
// est), and the shard's total.
func listPoints(plan *sweep.Plan, sh sweep.Shard, jobs int, est *unitEstimates) {
	w := bufio.NewWriter(os.Stdout) // up to 10^5 lines, in a few hundred writes
	defer w.Flush()
	units := sh.Select(plan.Units())
	fmt.Fprintf(w, "sweep %s: %d points x %d workloads = %d units", plan.Spec.Label(),
		len(plan.Points), len(plan.Workloads), len(plan.Units()))
	if sh.N > 1 {
		fmt.Fprintf(w, ", %d in shard %d/%d", len(units), sh.I, sh.N)
	}
	fmt.Fprintln(w, "; all configs valid")
	total := 0.0
	for _, u := range units {
		sec := sim.EstimateSeconds(est.get(unitKey{u.Point, u.Workload}))
		total += sec
		fmt.Fprintf(w, "  point %d  config %s  %s  %s  ~%s\n", u.Point.Index+1,
			u.Point.Hash, u.Workload.Trace.Name, u.Point.Label(), roundSeconds(sec))
	}
	par := max(1, min(jobs, runtime.NumCPU(), len(units)))
	fmt.Fprintf(w, "estimated time: ~%s on one core, ~%s with --jobs %d on %d "+
		"free cores (from the points' sizes, less the records the simulation cache "+
		"holds; points already in the store are skipped)\n", roundSeconds(total), roundSeconds(total/float64(par)),
		jobs, par)
}

// roundSeconds renders an estimate in seconds to 2 significant figures.
func roundSeconds(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	for _, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		if d >= 10*unit {
			return d.Round(unit).String()
		}
	}
	return d.Round(100 * time.Millisecond).String()
}

func executeSweep(plan *sweep.Plan, db string, opt sweep.Options, quiet bool) int {
	st, err := store.Open(db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return storeExit(err)
	}
	var closeOnce sync.Once
	closeFailed := false
	closeStore := func() {
		closeOnce.Do(func() {
			if err := st.Close(); err != nil {
				closeFailed = true
				fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
			}
		})
	}
	// On a fatal exit anywhere, finished points are already committed;
	// closing checkpoints the WAL so the store is one self-contained file.
	atexit.Register(closeStore)
	defer closeStore()

	ctx, stop := interruptible()
	defer stop()
	units := opt.Shard.Select(plan.Units())
	shardNote := ""
	if opt.Shard.N > 1 {
		shardNote = fmt.Sprintf(", shard %d/%d: %d units", opt.Shard.I,
			opt.Shard.N, len(units))
	}
	if !quiet {
		fmt.Fprintf(os.Stderr, "sweep %s: %d points x %d workloads = %d "+
			"units%s; store %s\n", plan.Spec.Label(), len(plan.Points),
			len(plan.Workloads), len(plan.Units()), shardNote, db)
	}
	var bar *progress.Bar
	opt.Started = func(todo, skipped int) {
		if !quiet && skipped > 0 {
			fmt.Fprintf(os.Stderr, "%d units already in the store, "+
				"skipped\n", skipped)
		}
		bar = progress.New(todo, "points", quiet || todo == 0)
	}
	opt.Finished = func(sweep.Unit) { bar.Add(1) }
	sum, err := sweep.Run(ctx, plan, st, opt)
	bar.Done()
	if !quiet {
		fmt.Fprintf(os.Stderr, "%d simulated, %d skipped (already stored)",
			sum.Ran, sum.Skipped)
		if sum.Raced > 0 {
			fmt.Fprintf(os.Stderr, ", %d committed first by another sweep", sum.Raced)
		}
		fmt.Fprintln(os.Stderr)
	}
	var inputErr *store.InputError
	switch {
	case errors.As(err, &inputErr):
		// The store conflicts with the sweep (another writer changed it
		// since the check): running again cannot help.
		fmt.Fprintln(os.Stderr, "stcsim sweep:", flagged(err))
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(os.Stderr, "stcsim sweep: interrupted; finished points "+
			"are in %s, run the same command again to resume\n", db)
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(os.Stderr, "stcsim sweep: %v\nfinished points are in "+
			"%s; run the same command again to resume\n", flagged(err), db)
		return exitInternal
	}
	if closeStore(); closeFailed {
		return exitInternal
	}
	return exitOK
}

// interruptible returns a context cancelled by the first SIGINT or
// SIGTERM: the sweep then starts nothing new and lets running points
// commit. A second signal exits at once through atexit (running points
// are lost, committed ones are not).
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(os.Stderr, "\nstcsim sweep: stopping after the running "+
			"points commit (interrupt again to quit now)")
		cancel()
		select {
		case <-sigs:
			atexit.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
