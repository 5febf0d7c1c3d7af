package sim

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

type runner struct {
	ld  *configs.Loaded
	cfg *configs.Config
	job Job
}

func newRunner(ld *configs.Loaded, job Job) *runner {
	return &runner{ld: ld, cfg: ld.Config, job: job}
}

// layerJob is one record to produce: a workload GEMM in one mode.
type layerJob struct {
	workload string
	gemm     workloads.GEMM
	mode     tensorcore.Mode
	shape    gemmShape
}

func (r *runner) run() (*Report, error) {
	jobs, err := r.layerJobs()
	if err != nil {
		return nil, err
	}
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
	kernels, err := r.simulateDistinct(jobs)
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
	for _, j := range jobs {
		rep.Results = append(rep.Results, r.record(j, kernels[j.shape]))
	}
	addSpeedups(rep)
	addEnergySavings(rep)
	return rep, nil
}

// layerJobs expands workloads x modes into records, in workload order.
func (r *runner) layerJobs() ([]layerJob, error) {
	var jobs []layerJob
	for _, w := range r.job.Workloads {
		for _, g := range w.GEMMs {
			for _, m := range r.job.Modes {
				shape, err := shapeOf(r.cfg, g, m)
				if err != nil {
					return nil, fmt.Errorf("workload %s layer %s: %w",
						w.Name, g.Name, err)
				}
				jobs = append(jobs, layerJob{workload: w.Name, gemm: g,
					mode: m, shape: shape})
			}
		}
	}
	return jobs, nil
}

// shapeOf is the GEMM a record runs: the sparse variant runs the sparse
// kernel only where the layer is pruned, with its pattern (RowPattern).
// Sparse activations run as the transposed GEMM (D^T = B^T A^T: N x M,
// the activations the MMA's compressed A operand).
func shapeOf(cfg *configs.Config, g workloads.GEMM, mode tensorcore.Mode) (gemmShape, error) {
	s, err := baseShape(cfg, g, mode)
	if err != nil || !s.Sparse || !cfg.TensorCore.DualSide {
		return s, err
	}
	s.Dual = true
	err = dualWork(cfg, g, &s)
	return s, err
}

// baseShape is shapeOf without the dual-side mode's products (what the
// kernel plans need to say whether a tile can run the GEMM).
func baseShape(cfg *configs.Config, g workloads.GEMM, mode tensorcore.Mode) (gemmShape, error) {
	s := gemmShape{M: g.M, N: g.N, K: g.K, Batch: max(1, g.Batch),
		Precision: g.Precision,
		Sparse:    mode == tensorcore.Sparse && g.Sparsity != workloads.Dense}
	if !s.Sparse {
		return s, nil
	}
	pat, err := RowPattern(cfg, g)
	if err != nil {
		return s, err
	}
	s.Pattern = pat
	if g.SparseOperand == workloads.OperandActivations {
		s.M, s.N = s.N, s.M
	}
	s.Dual = cfg.TensorCore.DualSide
	return s, nil
}

// RowPattern is the N:M pattern a sparse row runs with: a row tagged with
// the hardware's pattern of its precision (2:4; 1:2 for tf32), as every
// built-in model, --gemm and sweep GEMM list is, runs with the config's
// tensorcore.<precision>.sparse_pattern, so one key re-prunes a whole
// network; a row naming another pattern (layer-wise N:M) or carrying a
// weight file (a real mask) keeps its own.
func RowPattern(cfg *configs.Config, g workloads.GEMM) (tensorcore.Pattern, error) {
	sp := g.Sparsity
	if sp == workloads.SparsityFor(g.Precision) && g.Weights == "" {
		prec, err := cfg.TensorCore.Get(g.Precision)
		if err != nil {
			return tensorcore.Pattern{}, err
		}
		sp = prec.SparsePattern
	}
	return tensorcore.ParsePattern(sp)
}

// simulateDistinct simulates each distinct GEMM shape once, in parallel
// (each simulation has its own engine, so results do not depend on the
// schedule).
func (r *runner) simulateDistinct(jobs []layerJob) (map[gemmShape]*kernelResult, error) {
	var shapes []gemmShape
	seen := map[gemmShape]bool{}
	for _, j := range jobs {
		if !seen[j.shape] {
			seen[j.shape] = true
			shapes = append(shapes, j.shape)
		}
	}
	results := make([]*kernelResult, len(shapes))
	errs := make([]error, len(shapes))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	work := make(chan int)
	workers := runtime.GOMAXPROCS(0)
	if r.job.Observer != nil {
		workers = 1
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i], errs[i] = runKernel(r.cfg, shapes[i], r.job.Observer)
				mu.Lock()
				done++
				if r.job.Progress != nil {
					r.job.Progress(done, len(shapes))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range shapes {
		work <- i
	}
	close(work)
	wg.Wait()
	out := map[gemmShape]*kernelResult{}
	for i, s := range shapes {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[s] = results[i]
	}
	return out, nil
}

// record turns a simulated kernel into the output record of one layer.
func (r *runner) record(j layerJob, k *kernelResult) LayerResult {
	g := j.gemm
	clockHz := float64(k.clockMHz) * 1e6
	cycles, cyclesMean, cyclesSpread := ensembleCycles(k)
	sec := float64(cycles) / clockHz
	flops := 2 * float64(g.M) * float64(g.N) * float64(g.K) *
		float64(max(1, g.Batch))
	res := LayerResult{Workload: j.workload, Layer: g.Name, M: g.M, N: g.N,
		K: g.K, Batch: max(1, g.Batch), Precision: g.Precision, Mode: j.mode,
		SparseApplied: j.shape.Sparse, Count: max(1, g.Count),
		Kernel: k.plan.name(), SplitK: k.plan.splitK, Cycles: cycles,
		TimeUS: sec * 1e6, TFLOPS: flops / sec / 1e12,
		TCUtilization: float64(k.tcBusy) / float64(uint64(k.tcUnits)*k.cycles),
		Breakdown:     k.breakdown, Bound: k.breakdown.Bound(),
		Note: g.Note, Candidates: k.candidates, CyclesMean: cyclesMean,
		CyclesSpread: cyclesSpread}
	if j.shape.Sparse {
		res.Pattern = j.shape.Pattern.String()
		res.SparseOperand = workloads.OperandWeights
		if g.SparseOperand != "" {
			res.SparseOperand = g.SparseOperand
		}
		res.DualSide, res.Masks = j.shape.Dual, j.shape.Masks
		res.DualProducts = j.shape.Products
	}

	res.UsefulUtilization = r.usefulUtilization(g, sec, k.clockMHz)
	fillTraffic(&res, k, sec)
	res.Power = r.power(k)
	if a, err := r.cfg.AreaModel(); err == nil { // the config loaded: it has an area
		res.Cost = results.NewCost(a.GPUMM2, res.TFLOPS, res.AvgPowerW, res.EnergyUJ, res.TimeUS)
	}
	if k.powerNote != "" {
		res.Note = joinNote(res.Note, k.powerNote)
	}
	if lim := r.cfg.Power.LimitW; r.cfg.GPU.ClockPolicy == energy.Locked && res.AvgPowerW > lim {
		res.AbovePowerLimit = true
		res.Note = joinNote(res.Note, fmt.Sprintf("%.0f W at the locked %d MHz, above "+
			"power.limit_w (%.0f W): the board would throttle (gpu.clock_policy="+
			"power_capped models it)", res.AvgPowerW, res.ClockMHz, lim))
	}
	explainLaunch(&res, k.plan, r.cfg.GPU.SMCount)
	if k.plan.paddedK != g.K {
		res.Note = joinNote(res.Note, fmt.Sprintf("K padded %d->%d for the "+
			"sparse kernel", g.K, k.plan.paddedK))
	}
	if k.extrapolated {
		res.Note = joinNote(res.Note, fmt.Sprintf("extrapolated from the "+
			"first %d and the last of %d waves", k.trackedWaves, k.waves))
	}
	if st := k.straggler; !k.kExtrapolated && st.alone > 0 &&
		float64(st.alone) >= stragglerShare*float64(k.cycles) {
		res.Straggler = &Straggler{SM: st.sm, CTAs: st.ctas, AloneCycles: st.alone}
		res.Note = joinNote(res.Note, fmt.Sprintf("SM %d ran alone for the "+
			"last %d cycles (%.1f %%) with %d CTA(s): where the last CTAs "+
			"land (sim.jitter_runs samples it)", st.sm, st.alone,
			100*float64(st.alone)/float64(k.cycles), st.ctas))
	}
	if k.fastForwarded > 0 {
		res.Note = joinNote(res.Note, fmt.Sprintf("fast-forwarded: %d of its "+
			"CTAs' %d k-steps left out at the steady rate", k.fastForwarded,
			k.plan.totalKSteps()))
	}
	if k.kExtrapolated {
		res.Note = joinNote(res.Note, fmt.Sprintf("extrapolated in K from "+
			"%d and %d of %d k-steps", kSamples[0], kSamples[1], k.plan.kSteps))
	}
	return res
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
func ensembleCycles(k *kernelResult) (cycles uint64, mean, spread float64) {
	if len(k.runCycles) < 2 {
		return k.cycles, 0, 0
	}
	runs := make([]float64, len(k.runCycles))
	for i, c := range k.runCycles {
		runs[i] = float64(c)
	}
	mean, spread = meanOf(runs), spreadOf(runs)
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
func fillTraffic(res *LayerResult, k *kernelResult, sec float64) {
	m := k.mem
	res.DRAMReadBytes = m.DRAMReadBytes
	res.DRAMWriteBytes = m.DRAMWriteBytes
	res.DRAMWritebackBytes = k.writebackBytes
	res.DRAMGBps = float64(m.DRAMReadBytes+m.DRAMWriteBytes) / sec / 1e9
	res.L2HitRate = m.L2HitRate()
	res.MetadataBytes = m.MetadataBytes()
	res.SmemBytes = k.smemBytes
	res.L2Bytes = m.L2Bytes
}
