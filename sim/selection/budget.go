package selection

import (
	"sync/atomic"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
)

// Sim is one simulation kernel selection runs: a plan as simulated and
// what of it the SMs simulate, so that the work estimate (sim/work.go)
// can count it without deciding anything again.
type Sim struct {
	// Plan is the plan simulated: a K sample is the plan cut to its
	// k-steps (kernel.Plan.WithKSteps).
	Plan *kernel.Plan
	// Waves says whether the run is extrapolated in waves
	// (sim.extrapolate_waves; samples always are).
	Waves bool
	// CTAs is the CTAs simulated: all of the plan's, or the first waves
	// and the last where the run is extrapolated (gpu.ExtrapolatedLaunch).
	CTAs int
	// KSteps is the k-steps of one simulated CTA on average
	// (demand.Demand.MeanKSteps of Plan).
	KSteps float64
	// LastWave is the CTAs of the last wave where the run is
	// fast-forwarded (gpu.FastForwards), each simulating only Kept of its
	// k-steps and leaving the rest to the fast-forward; 0 otherwise.
	LastWave int
	Kept     float64
	// Runs is how many times it runs: the ensemble (sim.jitter_runs), or
	// the clocks a power cap tries (RetimedClocks).
	Runs int
}

// Budget is the simulations kernel selection runs for one shape's ranked
// candidates (Rank's list, in its order): each candidate's samples, then
// the record of the one chosen, which only the runs tell, so the record
// and the power cap's re-timing are listed per candidate. Select runs
// these lists (samplesOf, recordOf) and the work estimate counts them.
type Budget struct {
	// Fast says the fast tier times every candidate: nothing is simulated.
	Fast bool
	// Samples is every candidate's samples (each Runs times).
	Samples []Sim
	// Records is, per candidate, the record's own simulations if it is
	// chosen; empty where its samples are the record.
	Records [][]Sim
	// Retimes is, per candidate, its simulations at the clocks a power
	// cap tries (gpu.clock_policy=power_capped; empty otherwise; a
	// locked run's re-timing for its power-capped totals is
	// LockedRetimes').
	Retimes [][]Sim
}

// RetimedClocks is how many clocks besides the first a power-capped
// kernel is simulated at: energy.HighestFitting tries the predicted clock
// and then one step up (it fits) or down until one fits; one step is the
// common case (the V/f prediction is usually right), counted as two runs
// so that a miss by one step is still within the budget.
const RetimedClocks = 2

// BudgetOf is the simulations selecting among plans (Rank's list) runs
// under cfg, as RunRanked runs them. A run with an Observer that wants
// the samples simulates each candidate's samples in full (no pruning)
// and the record again; the budget counts the run without one.
func BudgetOf(cfg *configs.Config, plans []*kernel.Plan) Budget {
	if cfg.Sim.Fidelity == configs.FidelityFast {
		if _, refused := FastTimes(cfg, plans); refused == "" {
			return Budget{Fast: true}
		}
	}
	var b Budget
	for _, p := range plans {
		b.Samples = append(b.Samples, samplesOf(cfg, p)...)
		var record []Sim
		if !samplesAreRecord(cfg, p) {
			record = recordOf(cfg, p)
		}
		b.Records = append(b.Records, record)
		var retime []Sim
		if cfg.GPU.ClockPolicy == energy.PowerCapped {
			retime = retimesOf(cfg, p)
		}
		b.Retimes = append(b.Retimes, retime)
	}
	return b
}

// LockedRetimes is, per plan (Rank's list), the simulations of the
// power-capped re-timing `run` adds to a locked run for records above
// power.limit_w (sim.AddPowerCapped: the kernel at the clocks
// selection.CapClock tries), where the pre-model puts the plan above
// the limit (PredictedPower); empty for the others and outside a locked
// run on the instruction tier. Whether a kernel is above the limit only
// the run tells; the estimate counts what the pre-model expects.
func LockedRetimes(cfg *configs.Config, plans []*kernel.Plan) [][]Sim {
	out := make([][]Sim, len(plans))
	if cfg.GPU.ClockPolicy != energy.Locked || cfg.Sim.Fidelity != configs.FidelityInstruction {
		return out
	}
	for i, p := range plans {
		if PredictedPower(cfg, p) > cfg.Power.LimitW {
			out[i] = retimesOf(cfg, p)
		}
	}
	return out
}

// retimesOf is the simulations of p's power-capped re-timing: the
// whole kernel at RetimedClocks clocks, or its probe (probeOf) at those
// and the locked clock.
func retimesOf(cfg *configs.Config, p *kernel.Plan) []Sim {
	if probe := probeOf(cfg, p); probe != nil {
		return []Sim{simOf(cfg, probe, cfg.Sim.ExtrapolateWaves, RetimedClocks+1)}
	}
	return []Sim{simOf(cfg, p, cfg.Sim.ExtrapolateWaves, RetimedClocks)}
}

// samplesOf is the simulations that estimate p for the ranking, each run
// once per ensemble run (SampleEstimate): the whole kernel in K, or two
// samples cut to KSamples k-steps; always extrapolated in waves.
func samplesOf(cfg *configs.Config, p *kernel.Plan) []Sim {
	if SampledWhole(p) {
		return []Sim{simOf(cfg, p, true, EnsembleRuns(cfg))}
	}
	var out []Sim
	for _, k := range KSamples {
		out = append(out, simOf(cfg, p.WithKSteps(k), true, EnsembleRuns(cfg)))
	}
	return out
}

// recordOf is the simulations of p's record when they are not its
// samples (Select): the whole kernel, or under K extrapolation
// (LongInK) the two K samples the record is fitted from, with the
// config's wave extrapolation.
func recordOf(cfg *configs.Config, p *kernel.Plan) []Sim {
	if !LongInK(cfg, p) {
		return []Sim{simOf(cfg, p, cfg.Sim.ExtrapolateWaves, EnsembleRuns(cfg))}
	}
	var out []Sim
	for _, k := range KSamples {
		out = append(out, simOf(cfg, p.WithKSteps(k), cfg.Sim.ExtrapolateWaves, EnsembleRuns(cfg)))
	}
	return out
}

// samplesAreRecord says whether p's samples are its record, so that a
// chosen p is not simulated again: under the default extrapolations,
// where the sample was the whole kernel in waves and K, or where the
// whole-K sample had too few waves to be extrapolated.
func samplesAreRecord(cfg *configs.Config, p *kernel.Plan) bool {
	whole := SampledWhole(p)
	_, waves := gpu.ExtrapolatedLaunch(cfg, p, cfg.GPU.SMCount*p.Occupancy)
	return (cfg.Sim.ExtrapolateWaves && (whole || LongInK(cfg, p))) ||
		(whole && (!waves || !p.Schedule.WaveExtrapolable()))
}

// simOf is one simulation of p, extrapolated in waves where waves says
// and the launch has waves enough, run runs times.
func simOf(cfg *configs.Config, p *kernel.Plan, waves bool, runs int) Sim {
	s := Sim{Plan: p, Waves: waves, CTAs: p.CTAs, KSteps: demand.Of(cfg, p).MeanKSteps, Runs: runs}
	if !p.Schedule.WaveExtrapolable() { // no fast path (gpu.Build)
		s.Waves = false
		return s
	}
	slots := max(1, cfg.GPU.SMCount*p.Occupancy)
	extrapolated := false
	if waves {
		s.CTAs, extrapolated = gpu.ExtrapolatedLaunch(cfg, p, slots)
	}
	if gpu.FastForwards(cfg, p, extrapolated) {
		s.LastWave = s.CTAs - (kernel.CeilDiv(s.CTAs, slots)-1)*slots
		s.Kept = min(s.KSteps, float64(gpu.FastForwardKept(p)))
	}
	return s
}

// simulations counts the simulations selection starts (simulate): a
// test holds Budget to them.
var simulations atomic.Int64

// simulate is gpu.Simulate, counted.
func simulate(cfg *configs.Config, p *kernel.Plan, opt gpu.Options) (*gpu.Result, error) {
	simulations.Add(1)
	return gpu.Simulate(cfg, p, opt)
}
