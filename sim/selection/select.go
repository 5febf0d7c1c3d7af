package selection

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/tally"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
)

// Candidates lists every (tile, split-K, schedule) of the library that
// can run the GEMM, with why the others cannot.
func Candidates(cfg *configs.Config, g kernel.Shape) ([]*kernel.Plan, []string) {
	var plans []*kernel.Plan
	var rejected []string
	// Validated with the config: a pinned name parses.
	pin, _ := configs.ParseKernel(cfg.Kernel.Forced(g.KernelMode()))
	for _, t := range cfg.Kernel.Candidates {
		if !t.Supports(g.KernelMode(), g.Precision) || !t.OffersN(g.N) {
			continue
		}
		if pin.Tile != "" && t.Name() != pin.Tile {
			continue
		}
		for _, v := range variants(cfg, g, t, pin) {
			p, err := kernel.NewAs(cfg, g, t, v.split, v.s)
			if err != nil {
				rejected = append(rejected, err.Error())
				continue
			}
			plans = append(plans, p)
		}
	}
	return gemvCandidate(cfg, g, pin, plans, rejected)
}

func isGEMV(p *kernel.Plan) bool { return p.Schedule == kernel.GEMV }

// gemvCandidate adds the CUDA-core GEMV (kernel.NewGEMV) to a dense
// GEMM's candidates when its N is a decode batch (N <= kernel.GEMVMaxN)
// or the GEMV is pinned; a pinned GEMV that cannot run the GEMM is
// rejected with its reason.
func gemvCandidate(cfg *configs.Config, g kernel.Shape, pin configs.KernelName,
	plans []*kernel.Plan, rejected []string) ([]*kernel.Plan, []string) {
	pinned := pin.Tile == kernel.GEMVName
	if (pin.Tile != "" && !pinned) || (!pinned && (g.Sparse || g.N > kernel.GEMVMaxN)) {
		return plans, rejected
	}
	p, err := kernel.NewGEMV(cfg, g)
	if err != nil {
		if pinned || !g.Sparse {
			rejected = append(rejected, err.Error())
		}
		return plans, rejected
	}
	return append(plans, p), rejected
}

// variant is one kernel of a tile: a split factor and a schedule.
type variant struct {
	split int
	s     kernel.Schedule
}

// variants are the kernels of tile t worth trying: the pinned one when
// the name gives a schedule, else each split factor (SplitFactors) as
// parallel split-K and, with kernel.serial_split_k, as serial split-K,
// and with kernel.stream_k the stream-K kernel.
func variants(cfg *configs.Config, g kernel.Shape, t configs.TileConfig, pin configs.KernelName) []variant {
	if pin.Suffix != "" { // pinned: the heuristic's limits do not apply
		s := kernel.ScheduleOf(pin)
		return []variant{{max(1, pin.N), s}}
	}
	var out []variant
	for _, f := range SplitFactors(cfg, g, t) {
		if f == 1 {
			out = append(out, variant{1, kernel.DataParallel})
			continue
		}
		out = append(out, variant{f, kernel.ParallelSplitK})
		if cfg.Kernel.SerialSplitK {
			out = append(out, variant{f, kernel.SerialSplitK})
		}
	}
	if cfg.Kernel.StreamK {
		out = append(out, variant{1, kernel.StreamK})
	}
	return out
}

// SplitFactors are the split-K factors worth trying: split-K only pays
// when the output tiles alone cannot fill the GPU and K is deep enough to
// give every split at least a few k-steps.
func SplitFactors(cfg *configs.Config, g kernel.Shape, t configs.TileConfig) []int {
	tiles := kernel.CeilDiv(g.M, t.BM) * kernel.CeilDiv(g.N, t.BN) * g.Batch
	out := []int{1}
	for _, f := range cfg.Kernel.SplitK {
		if f > 1 && tiles < cfg.GPU.SMCount && g.K/f >= 4*t.BK {
			out = append(out, f)
		}
	}
	return out
}

// Rank is the candidates kernel selection simulates, best first by the
// pre-model (estimate): at most kernel.simulated_candidates of them. The
// work estimate counts the same list.
//
// Stream-K candidates (kernel.stream_k) are not ranked against the
// others: the pre-model would count their balanced k-steps and not their
// per-tile prologues and fix-up, and crowd out the data-parallel tiles.
// Each kept tile's stream-K twin is simulated beside it instead, when its
// decomposition has stream-K CTAs (otherwise it runs the same
// data-parallel tiles); a pinned stream-K kernel is ranked alone.
//
// The CUDA-core GEMV is ranked with the tiles and, when it ranks among
// the kept, simulated beside them rather than in place of the last: a
// decode GEMM is never run on a worse tile for its sake.
//
// Each call counts itself in tally.ShapesRanked, so that a test can hold
// a command to ranking each shape once.
func Rank(cfg *configs.Config, g kernel.Shape) ([]*kernel.Plan, []string) {
	tally.ShapesRanked.Add(1)
	all, rejected := Candidates(cfg, g)
	twins := map[string]*kernel.Plan{}
	var plans []*kernel.Plan
	for _, p := range all {
		if p.Schedule == kernel.StreamK {
			twins[p.Tile.Name()] = p
			continue
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 { // stream-K pinned
		plans, twins = all, nil
	}
	sort.SliceStable(plans, func(i, j int) bool {
		return Estimate(cfg, plans[i]) < Estimate(cfg, plans[j])
	})
	n := min(len(plans), max(1, cfg.Kernel.SimulatedCandidates))
	if i := slices.IndexFunc(plans, isGEMV); i >= 0 && i < n {
		n = min(len(plans), n+1) // kept beside the tiles, not in place of one
	}
	kept := plans[:n]
	out := slices.Clone(kept)
	for _, p := range kept {
		if t := twins[p.Tile.Name()]; t != nil && t.StreamK().SKBlocks > 0 {
			out = append(out, t)
			delete(twins, p.Tile.Name())
		}
	}
	return out, rejected
}

// Estimate is the cheap pre-model that ranks candidates before the best
// few are simulated: per-SM tensor-core and shared-memory time over the
// CTAs each SM gets, against L2 and DRAM streaming time, plus fill. The
// demands it weighs are the plan's demand model's (sim/demand, which the
// fast tier reads too); the score is its own.
func Estimate(cfg *configs.Config, p *kernel.Plan) float64 {
	d := demand.Of(cfg, p)
	ctasPerSM := float64(kernel.CeilDiv(p.CTAs, cfg.GPU.SMCount))
	step := max(d.TCCycles, d.BankCycles, d.FMACycles)
	smTime := ctasPerSM * d.MeanKSteps * step
	l2 := float64(d.KSteps) * d.Stage.Bytes() /
		float64(cfg.Memory.L2.BytesPerClk)
	dram := (d.OperandBytes() + d.DBytes) / d.DRAMBytesPerClk
	fill := float64(cfg.SM.KernelLaunchLatency+cfg.Memory.DRAM.Latency) +
		float64(p.Tile.Stages)*step
	switch p.Schedule {
	case kernel.ParallelSplitK: // the reduction pass
		fill += float64(cfg.SM.KernelLaunchLatency) + d.PartialBytes/d.DRAMBytesPerClk
	case kernel.SerialSplitK: // each split after the first reads D and writes it again
		fill += float64(p.SplitK-1) * 2 * d.DBytes /
			float64(cfg.Memory.L2.BytesPerClk)
	}
	return max(smTime, l2, dram) + fill
}

// sampleKSteps bounds a sample in K: a candidate is ranked on
// wave-extrapolated samples of at most this many k-steps per CTA (see
// sampleEstimate), then the best is simulated in full. A kernel is
// periodic in K only once the fixed costs of the CTAs sharing an SM
// (prologue, epilogue) overlap each other's mainloops as they will to the
// end: on 16384^2 x K dense with 128x128x32_64x64_s5 (two CTAs per SM),
// 24 -> 48 k-steps add 59 k cycles per k-step, 48 -> 96 add 78 k (the
// tensor cores' bound is 77.8 k), so the two samples are 48 and 96.
const SampleKSteps = 96

// SampledWhole says whether a plan's selection sample runs its whole K
// (else two shorter samples are fitted in K: sampleEstimate). The work
// estimate and K extrapolation (longInK) follow the same rule.
// Serial split-K and stream-K plans, which cannot be cut in K, are always
// sampled whole (and with no fast path: the sample is the full run).
func SampledWhole(p *kernel.Plan) bool {
	return !p.Schedule.Cuttable() || p.LastKSteps <= 2*SampleKSteps
}

// SampleEstimate predicts a plan's cycles from wave-extrapolated samples
// (as sim.extrapolate_waves: the first waves, then the steady rate), so
// that the ranking sees the steady state and not only the first waves,
// whose CTAs start in step. A kernel of at most twice
// sampleKSteps k-steps is sampled whole in K (and returned when that is
// the full simulation); a longer one at sampleKSteps/2 and sampleKSteps
// k-steps, fitted as cycles = fixed + per-k-step x k-steps so that fixed
// costs (launch, prologue, epilogue) count once instead of scaling with K.
// run is the ensemble run (0: unperturbed; see jitter.go).
//
// above > 0 stops the sample once its estimate provably exceeds above
// (prune.go; for a long-K plan, its second K sample against kFit); the
// estimate returned is then that lower bound and pruned is true.
func SampleEstimate(cfg *configs.Config, p *kernel.Plan, obs gpu.Observer, run int, above float64) (est float64, full *gpu.Result, pruned bool, err error) {
	sampleCfg := *cfg
	sampleCfg.Sim.ExtrapolateWaves = true
	sims := samplesOf(cfg, p) // the budget's list (budget.go)
	if len(sims) == 1 {
		r, err := simulate(&sampleCfg, sims[0].Plan, gpu.Options{Observer: obs, Run: run, Above: above})
		if bound, ok := gpu.PrunedBound(err); ok {
			return float64(bound), nil, true, nil
		}
		if err != nil {
			return 0, nil, false, err
		}
		if !r.Extrapolated || cfg.Sim.ExtrapolateWaves {
			return float64(r.Cycles), r, false, nil
		}
		return float64(r.Cycles), nil, false, nil
	}
	var rs [2]*gpu.Result
	for i, sample := range sims { // cut to KSamples' k-steps
		// The second sample can be pruned: the estimate grows with its
		// cycles (kFit), so it loses once they pass kFit's inverse of above.
		limit := 0.0
		if i == 1 && above > 0 {
			limit = kFitInverse(p, float64(rs[0].Cycles), above)
		}
		r, err := simulate(&sampleCfg, sample.Plan, gpu.Options{Observer: obs, Run: run, Above: limit})
		if bound, ok := gpu.PrunedBound(err); ok {
			return kFit(p, float64(rs[0].Cycles), float64(bound)), nil, true, nil
		}
		if err != nil {
			return 0, nil, false, err
		}
		rs[i] = r
	}
	if LongInK(cfg, p) && cfg.Sim.ExtrapolateWaves {
		// The record is the same fit (kextrapolate.go).
		r := extendInK(p, rs[0], rs[1])
		return float64(r.Cycles), r, false, nil
	}
	cyc := [2]float64{float64(rs[0].Cycles), float64(rs[1].Cycles)}
	perK := max(0, (cyc[1]-cyc[0])/float64(KSamples[1]-KSamples[0]))
	fixed := max(0, cyc[1]-perK*float64(KSamples[1]))
	// Never below the record's fit, which is bounded by the tensor cores'
	// time per added k-step (extendInK): the same floor for the ranking.
	return max(fixed+perK*float64(p.KSteps), float64(extendInK(p, rs[0], rs[1]).Cycles)), nil, false, nil
}

// kFit is a lower bound on a long-K estimate from its samples' cycles c1
// (kSamples[0] k-steps) and c2 (kSamples[1]): the line through them at
// the plan's k-steps, never below c2. The record's fit (extendInK) is
// exactly this, and the fixed + per-k-step fit below is at least it
// (its per-k-step cost is clamped at 0 and its fixed cost at 0, either of
// which only adds). It grows with c2, so a bound on c2 bounds it.
func kFit(p *kernel.Plan, c1, c2 float64) float64 {
	m := float64(p.KSteps-KSamples[1]) / float64(KSamples[1]-KSamples[0])
	return c2 + max(0, c2-c1)*m
}

// kFitInverse is the c2 at which kFit reaches est (est >= c1 assumed
// otherwise: below c1 the fit is c2 itself).
func kFitInverse(p *kernel.Plan, c1, est float64) float64 {
	if est <= c1 {
		return est
	}
	m := float64(p.KSteps-KSamples[1]) / float64(KSamples[1]-KSamples[0])
	return (est + c1*m) / (1 + m)
}

// candidateEstimate is one simulated candidate: its sample estimates over
// the ensemble and, where the sample was the full simulation, the results.
type candidateEstimate struct {
	plan  *kernel.Plan
	est   []float64
	fulls []*gpu.Result // nil entries: the sample was not the full run
	// pruned: the sample was stopped once it could not win, and est is
	// a lower bound on its estimate (prune.go).
	pruned bool
}

func (c *candidateEstimate) mean() float64 { return MeanOf(c.est) }

// estimateEnsemble runs a candidate's samples over the ensemble; above >
// 0 (a single run only) stops the sample once it cannot beat above.
func estimateEnsemble(cfg *configs.Config, p *kernel.Plan, obs gpu.Observer, above float64) (*candidateEstimate, error) {
	c := &candidateEstimate{plan: p}
	for run := 0; run < EnsembleRuns(cfg); run++ {
		est, full, pruned, err := SampleEstimate(cfg, p, obs, run, above)
		if err != nil {
			return nil, err
		}
		c.est = append(c.est, est)
		c.fulls = append(c.fulls, full)
		c.pruned = c.pruned || pruned
	}
	return c, nil
}

// EnsembleRuns is how many jittered runs time each candidate (at least one).
func EnsembleRuns(cfg *configs.Config) int {
	return max(1, cfg.Sim.JitterRuns)
}

// Select ranks the library's candidates the way a library's
// heuristic plus profiling would: the cheap pre-model keeps the best
// kernel.simulated_candidates, each is estimated from samples (over the
// sim.jitter_runs ensemble, on the mean, so that the choice does not
// favour a candidate for one lucky interleaving), and the fastest is
// simulated in full, once per ensemble run.
//
// Select ranks the candidates itself; a caller that has ranked them
// (sim.Prepare) runs RunRanked, which selects among its list.
func Select(cfg *configs.Config, g kernel.Shape, obs gpu.Observer) (*gpu.Result, error) {
	plans, rejected := Rank(cfg, g)
	if len(plans) == 0 {
		return nil, NoKernelError(cfg, g, rejected)
	}
	return selectRanked(cfg, plans, obs)
}

// selectRanked is Select among ranked candidates (at least one).
func selectRanked(cfg *configs.Config, plans []*kernel.Plan, obs gpu.Observer) (*gpu.Result, error) {
	var cands []*candidateEstimate
	sampleObs := samplesFor(obs)
	// A candidate after the first is stopped once it provably cannot beat
	// the best so far (prune.go): exact, since a stopped one could not
	// have been chosen. Under sim.prune_tolerance t, once it could beat
	// it by no more than t of its estimate: the kernel chosen is then
	// within t of the best. Not in an ensemble (the ranking is on means)
	// and not when samples are traced (their traces would end early).
	prune := EnsembleRuns(cfg) == 1 && sampleObs == nil
	lead := 0.0 // the best estimate so far
	for _, p := range plans {
		above := 0.0
		if prune {
			above = lead * (1 - cfg.Sim.PruneTolerance)
		}
		c, err := estimateEnsemble(cfg, p, sampleObs, above)
		if err != nil {
			return nil, err
		}
		if !c.pruned && (lead == 0 || c.mean() < lead) {
			lead = c.mean()
		}
		cands = append(cands, c)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].mean() < cands[j].mean() })
	leadFirst(cands)
	best := cands[0]
	var runs []*gpu.Result
	for run, full := range best.fulls {
		// An observer sees the reported kernel (run 0, unperturbed) as
		// its own simulation, not as a sample: the same result, since
		// simulations are deterministic. The ensemble's other runs are
		// samples.
		o := sampleObs
		if run == 0 {
			o = obs
		}
		if full == nil || o != nil {
			var err error
			if full, err = simulateRecord(cfg, best.plan, o, run); err != nil {
				return nil, err
			}
		}
		runs = append(runs, full)
	}
	r := runs[0]
	for _, x := range runs {
		r.RunCycles = append(r.RunCycles, x.Cycles)
	}
	for _, c := range cands {
		r.Candidates = append(r.Candidates, results.Candidate{Kernel: c.plan.Name(),
			EstimatedCycles: c.mean(), Spread: SpreadOf(c.est), Pruned: c.pruned})
	}
	return r, nil
}

// leadFirst moves the best candidate simulated to its end to the front
// of cands (sorted by estimate). Only under sim.prune_tolerance can a
// stopped candidate's bound be below it (the candidate stopped where it
// could have won by at most the tolerance); the others keep their order.
func leadFirst(cands []*candidateEstimate) {
	i := slices.IndexFunc(cands, func(c *candidateEstimate) bool { return !c.pruned })
	if i > 0 {
		lead := cands[i]
		copy(cands[1:i+1], cands[:i])
		cands[0] = lead
	}
}

// MeanOf is the arithmetic mean of x.
func MeanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// SpreadOf is (max - min) / mean; 0 for fewer than two values.
func SpreadOf(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	return (hi - lo) / MeanOf(x)
}

// SampleObserver is an Observer that also wants the kernel-selection
// samples; they reach it as kernels named "candidate sample: ...". An
// Observer without it sees only the reported kernel of each GEMM.
type SampleObserver interface {
	gpu.Observer
	WantsSamples() bool
}

// samplesFor is the observer of selection samples: nil unless obs asks.
func samplesFor(obs gpu.Observer) gpu.Observer {
	if so, ok := obs.(SampleObserver); ok && so.WantsSamples() {
		return sampleNames{obs}
	}
	return nil
}

// sampleNames marks the kernels it passes on as selection samples.
type sampleNames struct{ obs gpu.Observer }

// selSamplePrefix starts the name of every kernel-selection sample.
const SamplePrefix = "candidate sample: "

func (s sampleNames) KernelBuilt(k string, e akita.Engine, c []akita.Component) {
	s.obs.KernelBuilt(SamplePrefix+k, e, c)
}

func (s sampleNames) KernelDone(k string) { s.obs.KernelDone(SamplePrefix + k) }

// distinctFirst is list without repeats (one message per tile and split
// factor often says the same thing), at most n, with a count of the rest.
func distinctFirst(list []string, n int) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > n {
		out = append(out[:n], fmt.Sprintf("and %d more", len(out)-n))
	}
	return out
}

// NoKernelError says why no kernel can run shape g: the forced kernel, or
// the candidates rejected and why.
func NoKernelError(cfg *configs.Config, g kernel.Shape, rejected []string) error {
	why := "no candidate tile lists this mode and precision"
	if f := cfg.Kernel.Forced(g.KernelMode()); f != "" {
		why = fmt.Sprintf("the pinned kernel %s (kernel.force, force_dense, "+
			"force_sparse) does not offer it", f)
		tile, _, _ := configs.ParseKernelName(f)
		var lists []string
		for _, t := range cfg.Kernel.Candidates {
			if t.Name() == tile {
				lists = append(lists, strings.Join(t.Modes, " and ")+" "+strings.Join(t.Precisions, ", "))
			}
		}
		if len(lists) > 0 {
			why += ": the library lists it for " + strings.Join(lists, "; ") + " only"
		}
	}
	if len(rejected) > 0 {
		why = strings.Join(distinctFirst(rejected, 3), "; ")
	}
	return fmt.Errorf("no kernel in the library can run the %s %s GEMM "+
		"%dx%dx%d: %s", g.KernelMode(), g.Precision, g.M, g.N, g.K, why)
}
