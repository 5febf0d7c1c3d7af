package sim

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/bug"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

type runner struct {
	ld   *configs.Loaded
	cfg  *configs.Config
	job  Job
	prep *Prepared

	simHashMu sync.Mutex
	simHash   map[tensorcore.Mode]string // SimulationHash by mode, made once
}

func newRunner(ld *configs.Loaded, p *Prepared) *runner {
	return &runner{ld: ld, cfg: ld.Config, job: p.Job, prep: p}
}

func (r *runner) run() (*Report, error) {
	jobs := r.prep.layers
	// The weights' hashes, before anything runs (a file that cannot be
	// read stops the run here).
	weights := map[string][]WeightsSource{}
	for _, w := range r.job.Workloads {
		ws, err := w.WeightsSources()
		if err != nil {
			return nil, err
		}
		weights[w.Name] = ws
	}
	recs, err := r.records(jobs, weightHashes(weights))
	if err != nil {
		return nil, err
	}
	rep := &Report{Tool: "stcsim", Version: Version, Config: r.cfg.Name,
		Provenance: configProvenance(r.ld)}
	rep.Provenance.Command = r.job.Command
	rep.Provenance.Workloads = r.job.Sources
	if rep.Provenance.Workloads == nil {
		for _, w := range r.job.Workloads {
			rep.Provenance.Workloads = append(rep.Provenance.Workloads,
				WorkloadSource{Name: w.Name, Source: "library"})
		}
	}
	rep.Provenance.Workloads = append([]WorkloadSource{}, rep.Provenance.Workloads...)
	for i := range rep.Provenance.Workloads {
		src := &rep.Provenance.Workloads[i]
		src.Weights = weights[src.Name]
	}
	over, err := r.sparsifierRecords()
	if err != nil {
		return nil, err
	}
	rep.Results = append(recs, over...)
	addSpeedups(rep)
	addTraffic(rep, r.cfg)
	addEnergySavings(rep)
	addTokenRates(rep)
	return rep, nil
}

// records makes every job's record: read from the cache, or simulated
// (and stored). A miss that another run of this process is simulating
// now (the points of a local sweep that share a dense simulation) waits
// for that run and reads the record it stored, so the simulation is made
// once; a run simulates everything it claimed before it waits for
// another's, so two runs never wait on each other.
func (r *runner) records(jobs []layerJob, hashes map[string]string) ([]LayerResult, error) {
	out := make([]LayerResult, len(jobs))
	hit, why := r.cached(jobs, hashes)
	caching := r.job.Cache != nil && r.job.Observer == nil
	if caching { // each record's outcome: read, or why it was simulated
		defer func() {
			for i := range out {
				if out[i].Cache == "hit" {
					r.job.Cache.Count(simcache.Hit)
				} else if out[i].Cache == "miss" {
					r.job.Cache.Count(why[i])
				}
			}
		}()
	}
	var own, waiting []int
	var waits []<-chan struct{}
	var claimed []claim
	defer func() { inflight.release(claimed) }()
	for i, j := range jobs {
		if hit[i] != nil {
			out[i] = *hit[i]
			out[i].Cache = "hit"
			continue
		}
		if caching {
			key := claim{r.job.Cache, r.cacheKey(j, hashes)}
			if ch, mine := inflight.claim(key); !mine {
				waiting, waits = append(waiting, i), append(waits, ch)
				continue
			}
			claimed = append(claimed, key)
		}
		own = append(own, i)
	}
	if err := r.simulateInto(out, jobs, own, hashes, caching); err != nil {
		return nil, err
	}
	inflight.release(claimed)
	claimed = nil
	if len(waiting) == 0 {
		return out, nil
	}
	for _, ch := range waits {
		<-ch
	}
	var late []layerJob
	for _, i := range waiting {
		late = append(late, jobs[i])
	}
	var rest []int
	lateHit, _ := r.cached(late, hashes)
	for n, rec := range lateHit {
		if i := waiting[n]; rec != nil {
			out[i] = *rec
			out[i].Cache = "hit"
		} else { // the other run failed, or its cache is not this one
			rest = append(rest, i)
		}
	}
	return out, r.simulateInto(out, jobs, rest, hashes, caching)
}

// simulateInto simulates the jobs at idx (each distinct GEMM once) and
// puts their records in out, storing them in the cache when caching.
func (r *runner) simulateInto(out []LayerResult, jobs []layerJob, idx []int,
	hashes map[string]string, caching bool) error {
	if len(idx) == 0 {
		return nil
	}
	var todo []layerJob
	for _, i := range idx {
		todo = append(todo, jobs[i])
	}
	kernels, err := r.simulateDistinct(todo)
	if err != nil {
		return err
	}
	for _, i := range idx {
		rec, in, err := r.record(jobs[i], kernels[jobs[i].shape])
		if err != nil {
			return err
		}
		if rec.AbovePowerLimit {
			r.job.locked.keep(jobs[i].shape, kernels[jobs[i].shape])
		}
		if caching {
			r.store(jobs[i], hashes, rec, in)
			rec.Cache = "miss"
		}
		out[i] = rec
	}
	return nil
}

// simulateDistinct simulates each distinct GEMM shape once, in parallel
// (each simulation has its own engine, so results do not depend on the
// schedule).
func (r *runner) simulateDistinct(jobs []layerJob) (map[kernel.Shape]*gpu.Result, error) {
	var shapes []kernel.Shape
	seen := map[kernel.Shape]bool{}
	for _, j := range jobs {
		if !seen[j.shape] {
			seen[j.shape] = true
			shapes = append(shapes, j.shape)
		}
	}
	results := make([]*gpu.Result, len(shapes))
	errs := make([]error, len(shapes))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	work := make(chan int)
	if r.job.Progress != nil { // the total from the start, not after the first GEMM
		r.job.Progress(0, len(shapes))
	}
	workers := runtime.GOMAXPROCS(0)
	if r.job.Observer != nil {
		workers = 1
	}
	var caught bug.Catcher // a worker's panic, re-raised here after the wait
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				caught.Do(func() {
					results[i], errs[i] = r.simulateShape(shapes[i])
				})
				mu.Lock()
				done++
				if r.job.Progress != nil {
					r.job.Progress(done, len(shapes))
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range r.order(shapes, workers) {
		work <- i
	}
	close(work)
	wg.Wait()
	caught.Raise()
	out := map[kernel.Shape]*gpu.Result{}
	for i, s := range shapes {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[s] = results[i]
	}
	return out, nil
}

// simulateShape selects shape s's kernel and times it, and under
// Job.PowerCappedTotals re-times it power-capped where it is above the limit;
// in AddPowerCapped's runs it re-times the locked run's kernel
// (retimeLocked), or gives the early re-timing.
func (r *runner) simulateShape(s kernel.Shape) (*gpu.Result, error) {
	if c := r.job.retime.cappedOf(s); c != nil {
		return c, nil // re-timed early (Job.PowerCappedTotals)
	}
	if k := r.job.retime.of(s); k != nil {
		return retimeLocked(r.cfg, k, r.job.Observer)
	}
	k, err := selection.RunRanked(r.cfg, s, r.prep.byKey[s].plans, r.job.Observer)
	if err == nil && r.job.PowerCappedTotals {
		err = r.retimeEarly(s, k)
	}
	return k, err
}

// order is the order the workers take the shapes in: the job's where
// one simulates at a time (observed runs: traces list the kernels as the
// job does), else longestFirst.
func (r *runner) order(shapes []kernel.Shape, workers int) []int {
	if workers > 1 {
		return r.longestFirst(shapes)
	}
	order := make([]int, len(shapes))
	for i := range order {
		order[i] = i
	}
	return order
}

// longestFirst orders the shapes by their estimated work (the front
// door's, per shape: Prepared.Work's), the costliest first, ties
// in the job's order. Taken in the job's order, a costly shape that comes
// last runs alone on one core while the others idle (the longest
// processing time first rule bounds the finish at 4/3 of the best
// schedule's). Each simulation has its own engine, so the order changes
// no result.
func (r *runner) longestFirst(shapes []kernel.Shape) []int {
	cost := make([]float64, len(shapes))
	order := make([]int, len(shapes))
	for i, s := range shapes {
		cost[i], order[i] = workOf(r.cfg, r.prep.shapeTotal(r.prep.byKey[s])), i
	}
	sort.SliceStable(order, func(a, b int) bool { return cost[order[a]] > cost[order[b]] })
	return order
}

// record turns a simulated kernel into the output record of one layer, and
// what its power fields are made from; an error when the counts cannot be
// priced.
func (r *runner) record(j layerJob, k *gpu.Result) (LayerResult, powerInputs, error) {
	g := j.gemm
	clockHz := float64(k.ClockMHz) * 1e6
	cycles, cyclesMean, cyclesSpread := ensembleCycles(k)
	sec := float64(cycles) / clockHz
	res := LayerResult{Workload: j.workload, Layer: g.Name, M: g.M, N: g.N,
		K: g.K, Batch: max(1, g.Batch), Precision: g.Precision, Mode: j.mode,
		SparseApplied: j.shape.Sparse, Count: max(1, g.Count),
		Kernel: k.Plan.Name(), SplitK: k.Plan.SplitK,
		Schedule: k.Plan.Schedule.String(), TailCycles: k.TailCycles,
		FixupBytes: k.FixupBytes, FixupWaitCycles: k.FixupWait, Cycles: cycles,
		TimeUS:        sec * 1e6,
		TCUtilization: float64(k.TCBusy) / float64(uint64(k.TCUnits)*k.Cycles),
		Breakdown:     k.Breakdown, Bound: k.Breakdown.Bound(), Phases: k.Phases,
		Note: g.Note, Candidates: k.Candidates, CyclesMean: cyclesMean,
		CyclesSpread: cyclesSpread, Layout: g.Layout, Pass: g.Pass}
	res.TFLOPS = res.FLOPs() / sec / 1e12
	if j.shape.Sparse {
		res.Pattern = j.shape.Pattern.String()
		res.SparseOperand = workloads.OperandWeights
		if g.SparseOperand != "" {
			res.SparseOperand = g.SparseOperand
		}
		res.DualSide, res.Masks = j.shape.Dual, j.shape.Masks
		res.DualProducts = j.shape.Products
		res.SparseAlong = g.SparseAlong
	}

	res.UsefulUtilization = r.usefulUtilization(g, sec, k.ClockMHz)
	fillTraffic(&res, k, sec)
	in := powerInputs{Act: k.Act, ClockMHz: k.ClockMHz, RowNote: g.Note, NoteHead: k.PowerNote}
	// The notes after the power note, gathered apart so that a record
	// read from the cache gets its power note again in the same place.
	res.Note = ""
	explainLaunch(&res, k.Plan, r.cfg.GPU.SMCount)
	addFidelity(&res, k)
	if k.Plan.PaddedK != g.K {
		res.Note = joinNote(res.Note, fmt.Sprintf("K padded %d->%d for the "+
			"sparse kernel", g.K, k.Plan.PaddedK))
	}
	if k.TransposeCycles > 0 {
		res.Note = joinNote(res.Note, fmt.Sprintf("B copied row-major first by a "+
			"transpose launch (%.1f µs of the time), which the V:N:M gather kernel needs",
			float64(k.TransposeCycles)/clockHz*1e6))
	}
	if k.Extrapolated {
		res.Note = joinNote(res.Note, fmt.Sprintf("extrapolated from the "+
			"first %d and the last of %d waves", k.TrackedWaves, k.Waves))
	}
	if st := k.Straggler; !k.KExtrapolated && st.Alone > 0 &&
		float64(st.Alone) >= gpu.StragglerShare*float64(k.Cycles) {
		res.Straggler = &Straggler{SM: st.SM, CTAs: st.CTAs, AloneCycles: st.Alone}
		res.Note = joinNote(res.Note, fmt.Sprintf("SM %d ran alone for the "+
			"last %d cycles (%.1f %%) with %d CTA(s): where the last CTAs "+
			"land (sim.jitter_runs samples it)", st.SM, st.Alone,
			100*float64(st.Alone)/float64(k.Cycles), st.CTAs))
	}
	if k.FastForwarded > 0 {
		res.Note = joinNote(res.Note, fmt.Sprintf("fast-forwarded: %d of its "+
			"CTAs' %d k-steps left out at the steady rate", k.FastForwarded,
			k.Plan.TotalKSteps()))
	}
	if k.KExtrapolated {
		res.Note = joinNote(res.Note, fmt.Sprintf("extrapolated in K from "+
			"%d and %d of %d k-steps", selection.KSamples[0], selection.KSamples[1], k.Plan.KSteps))
	}
	if k.ProbeKSteps > 0 {
		res.Note = joinNote(res.Note, fmt.Sprintf("re-timed at %d MHz from "+
			"probes of %d k-steps per CTA at the locked clock and this one",
			k.ClockMHz, k.ProbeKSteps))
	}
	if k.KBounded {
		res.Note = joinNote(res.Note, "the K fit was flatter than the tensor cores allow "+
			"(its first sample queued): raised to their time per added k-step")
	}
	in.NoteTail, res.Note = res.Note, ""
	return res, in, r.applyPower(&res, in)
}

// powerInputs are what a record's power fields (clock, energy, power,
// the note on a locked clock above the power limit) and cost are made
// from: the kernel's event counts and clock, and the record's notes before
// and after the power note. The simulation cache keeps them beside the
// record, so that a record read from it gets these fields from the
// reading run's config (configs.Loaded.SimulationHash leaves the power and
// area sections out of the key under a locked clock).
type powerInputs struct {
	Act      energy.Counts `json:"act"`
	ClockMHz int           `json:"clock_mhz"`
	// RowNote is the trace row's own note, which starts the record's: a
	// label of the row, not kept in the cache (a record read from it gets
	// the reading row's).
	RowNote  string `json:"-"`
	NoteHead string `json:"note_head"`
	NoteTail string `json:"note_tail"`
}

// applyPower fills a record's power fields, its note and its cost from
// in and the run's config; the static energy runs for the record's
// cycles (the ensemble mean with sim.jitter_runs > 1), the event classes
// are run 0's counts.
func (r *runner) applyPower(res *LayerResult, in powerInputs) error {
	b, err := r.cfg.Power.Energy(in.Act, res.Cycles, in.ClockMHz)
	if err != nil {
		return fmt.Errorf("energy of %s: %w", res.Kernel, err)
	}
	uj := b.Total()
	res.Power = Power{ClockMHz: in.ClockMHz, EnergyUJ: uj, Energy: b,
		AvgPowerW: energy.Power(uj, res.Cycles, in.ClockMHz)}
	r.addCost(res)
	res.Note = in.RowNote
	if in.NoteHead != "" {
		res.Note = joinNote(res.Note, in.NoteHead)
	}
	if lim := r.cfg.Power.LimitW; r.cfg.GPU.ClockPolicy == energy.Locked && res.AvgPowerW > lim {
		res.AbovePowerLimit = true
		res.Note = joinNote(res.Note, fmt.Sprintf("%.0f W at the locked %d MHz, above "+
			"power.limit_w (%.0f W): the board would throttle (gpu.clock_policy="+
			"power_capped models it)", res.AvgPowerW, res.ClockMHz, lim))
	}
	if in.NoteTail != "" {
		res.Note = joinNote(res.Note, in.NoteTail)
	}
	return nil
}

// addFidelity says which tier timed the record; a fast record carries
// the tier's stated error and no bound (the tier makes no breakdown).
func addFidelity(res *LayerResult, k *gpu.Result) {
	res.Fidelity = configs.FidelityInstruction
	if k.Fidelity == configs.FidelityFast {
		res.Fidelity = configs.FidelityFast
		res.FidelityErrorPct = fast.StatedErrorPctFor(k.Plan)
		res.Bound = ""
	}
	if n := selection.FastNote(k); n != "" {
		res.Note = joinNote(res.Note, n)
	}
}

// usefulUtilization is the layer's own work per second (the unpadded
// GEMM; skipped sparse multiplies count as done) over the dense peak of
// its precision at the clock the kernel ran at.
func (r *runner) usefulUtilization(g workloads.GEMM, sec float64, clockMHz int) float64 {
	m, k := g.M, g.K
	if g.UnpaddedM > 0 {
		m = g.UnpaddedM
	}
	if g.UnpaddedK > 0 {
		k = g.UnpaddedK
	}
	peak, err := r.cfg.PeakTFLOPS(g.Precision, false, clockMHz)
	if err != nil || peak <= 0 || sec <= 0 {
		return 0 // Check has refused a precision the config lacks
	}
	work := 2 * float64(m) * float64(g.N) * float64(k) * float64(max(1, g.Batch))
	return work / sec / 1e12 / peak
}

// ensembleCycles is the record's cycles: the single run's, or with an
// ensemble its rounded mean, with the mean and spread themselves.
func ensembleCycles(k *gpu.Result) (cycles uint64, mean, spread float64) {
	if len(k.RunCycles) < 2 {
		return k.Cycles, 0, 0
	}
	runs := make([]float64, len(k.RunCycles))
	for i, c := range k.RunCycles {
		runs[i] = float64(c)
	}
	mean, spread = selection.MeanOf(runs), selection.SpreadOf(runs)
	return uint64(math.Round(mean)), mean, spread
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// addSpeedups fills each sparse record's speedup over the dense record of
// the same layer, and the per-workload totals.
func addSpeedups(rep *Report) {
	type key struct{ w, l string }
	dense := map[key]float64{}
	denseRec := map[key]LayerResult{}
	var order []string
	totals := map[string]map[tensorcore.Mode]float64{}
	for _, r := range rep.Results {
		if totals[r.Workload] == nil {
			totals[r.Workload] = map[tensorcore.Mode]float64{}
			order = append(order, r.Workload)
		}
		totals[r.Workload][r.Mode] += r.TimeUS * float64(r.Count)
		if r.Mode == tensorcore.Dense {
			dense[key{r.Workload, r.Layer}] = r.TimeUS
			denseRec[key{r.Workload, r.Layer}] = r
		}
	}
	for i, r := range rep.Results {
		if d, ok := dense[key{r.Workload, r.Layer}]; ok && r.Mode == tensorcore.Sparse {
			rep.Results[i].Speedup = d / r.TimeUS
			explainLoss(&rep.Results[i], denseRec[key{r.Workload, r.Layer}])
			if r.SparseApplied && d < r.TimeUS {
				rep.Results[i].Note = joinNote(r.Note, slowerNote(rep.Results[i], denseRec[key{r.Workload, r.Layer}]))
			}
		}
	}
	for _, w := range order {
		for _, m := range tensorcore.Modes {
			t, ok := totals[w][m]
			if !ok {
				continue
			}
			tot := Total{Workload: w, Mode: m, TimeUS: t}
			if d, ok := totals[w][tensorcore.Dense]; ok && m == tensorcore.Sparse {
				tot.Speedup = d / t
			}
			rep.Totals = append(rep.Totals, tot)
		}
	}
}

// fillTraffic copies the memory hierarchy's accounting into a record.
func fillTraffic(res *LayerResult, k *gpu.Result, sec float64) {
	m := k.Mem
	res.DRAMReadBytes = m.DRAMReadBytes
	res.DRAMWriteBytes = m.DRAMWriteBytes
	res.DRAMWritebackBytes = k.WritebackBytes
	res.DRAMGBps = float64(m.DRAMReadBytes+m.DRAMWriteBytes) / sec / 1e9
	res.L2HitRate = m.L2HitRate()
	res.MetadataBytes = m.MetadataBytes()
	res.SmemBytes = k.SmemBytes
	res.L2Bytes = m.L2Bytes
}

// explainLaunch fills a record's launch shape from its kernel plan.
func explainLaunch(res *LayerResult, p *kernel.Plan, sms int) {
	res.CTAs = p.CTAs
	res.CTAsPerSM = p.Occupancy
	res.OccupancyLimit = p.Limit
	res.Waves = p.Waves(sms)
	if p.Shape.Sparse {
		res.IdealSpeedup = p.Format.Ideal() // the format's own: V:N:M's M/N, not 2:4's
	}
}

// explainLoss fills a sparse record's loss decomposition against the
// dense record of the same layer.
func explainLoss(s *LayerResult, d LayerResult) {
	// The fast tier makes no breakdown to divide the loss by.
	if s.IdealSpeedup == 0 || s.Fidelity == configs.FidelityFast || d.Fidelity == configs.FidelityFast {
		return
	}
	ideal := d.TimeUS / s.IdealSpeedup
	gap := s.TimeUS - ideal
	if gap <= 0 {
		return
	}
	ss, ds := s.Breakdown.Shares(), d.Breakdown.Shares()
	lost := make([]float64, len(ss))
	for i := range ss {
		lost[i] = (ss[i]*s.TimeUS - ds[i]*ideal) / gap
	}
	loss := results.BreakdownOf(lost)
	s.LossUS, s.Loss = gap, loss
}

// slowerNote says why a sparse record came out slower than its dense
// one: the two kernels, and the largest cause of the sparse kernel's
// time beyond the ideal. The sparse kernel is reported as it runs, not
// replaced by the dense one.
func slowerNote(s, d LayerResult) string {
	why := ""
	if s.LossUS > 0 {
		top := results.Cause{}
		for _, c := range s.Loss.Causes() {
			if c.Share > top.Share {
				top = c
			}
		}
		if top.Name != "" {
			why = fmt.Sprintf(", and %s is %.0f %% of its time beyond the ideal", top.Name, 100*top.Share)
		}
	}
	return fmt.Sprintf("sparse is slower than dense (%.2fx): the sparse kernel %s against the dense %s%s",
		s.Speedup, s.Kernel, d.Kernel, why)
}

// addEnergySavings fills each sparse record's and total's energy saving
// over the dense one of the same layer or workload, and the totals'
// energy (energy x count over the layers) and average power.
func addEnergySavings(rep *Report) {
	type key struct{ w, l string }
	dense := map[key]float64{}
	type wm struct {
		w string
		m tensorcore.Mode
	}
	sums := map[wm]energy.Breakdown{}
	for _, r := range rep.Results {
		if r.Mode == tensorcore.Dense {
			dense[key{r.Workload, r.Layer}] = r.EnergyUJ
		}
		k := wm{r.Workload, r.Mode}
		sums[k] = sums[k].Plus(r.Energy.Scale(float64(r.Count)))
	}
	for i, r := range rep.Results {
		if d, ok := dense[key{r.Workload, r.Layer}]; ok && r.Mode == tensorcore.Sparse {
			rep.Results[i].EnergySaving = d / r.EnergyUJ
		}
	}
	for i, t := range rep.Totals {
		b := sums[wm{t.Workload, t.Mode}]
		tp := TotalPower{EnergyUJ: b.Total(), Energy: b}
		if t.TimeUS > 0 {
			tp.AvgPowerW = tp.EnergyUJ / t.TimeUS
		}
		if d, ok := sums[wm{t.Workload, tensorcore.Dense}]; ok && t.Mode == tensorcore.Sparse {
			tp.EnergySaving = d.Total() / tp.EnergyUJ
		}
		rep.Totals[i].TotalPower = tp
	}
}

// addCost fills a record's cost from the config's area model. It is
// outside the cached part of a record: the area depends on sparse-only
// keys (metadata_bits_per_clk) a dense record's cache key leaves out.
func (r *runner) addCost(res *LayerResult) {
	if a, err := r.cfg.AreaModel(); err == nil { // the config loaded: it has an area
		res.Cost = results.NewCost(a.GPUMM2, res.TFLOPS, res.AvgPowerW, res.EnergyUJ, res.TimeUS)
	}
}
