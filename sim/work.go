package sim

import (
	"fmt"
	"math"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/sim/sm"
)

// WarpStepsPerSecond is the simulation speed the work estimate converts
// with: warp k-steps (one warp's instructions of one k-step, about 100 on
// the instruction-level SM) simulated per second of one core. Measured on
// the instruction-level SM: the default suite's estimate of 3.56e6 warp
// k-steps took 470 s of user CPU, 7.6e3 per second (docs/input-limits.md).
const WarpStepsPerSecond = 8e3

// DetailedMemoryFactor is the cost of a warp k-step under
// sim.memory_granularity=detailed (every line request through Akita
// caches and DRAM) in units of WarpStepsPerSecond's. Measured 2026-12-04
// on the 2-core machine with `stcsim run --gemm G --mode sparse
// --no-cache --set sim.memory_granularity=detailed`: 512^3 took 7.98 s
// of user CPU for 4.1e3 estimated warp k-steps (15.6x), 1024^3 25.1 s
// for 1.02e4 (19.7x); docs/log/2026-12-04-work.md.
const DetailedMemoryFactor = 18

// EstimateWork is the simulated work of a job, in warp k-steps of the
// fast memory path: the warp k-steps EstimateKSteps counts, each costing
// DetailedMemoryFactor under sim.memory_granularity=detailed.
func EstimateWork(cfg *configs.Config, job Job) float64 {
	w := EstimateKSteps(cfg, job)
	if cfg.Sim.MemoryGranularity == "detailed" {
		w *= DetailedMemoryFactor
	}
	return w
}

// EstimateKSteps is the number of warp k-steps a job simulates: for each
// distinct GEMM, the sampled candidates of kernel selection plus the full
// simulation of the costliest candidate that may be picked, each counting
// the CTAs that are simulated (the first waves only where extrapolated),
// and all of it sim.jitter_runs times (the selection ensemble,
// selection.EnsembleRuns). It runs no simulation; a GEMM no kernel can
// run counts nothing (the run reports it).
func EstimateKSteps(cfg *configs.Config, job Job) float64 {
	seen := map[kernel.Shape]bool{}
	total := 0.0
	for _, w := range job.Workloads {
		for _, g := range w.GEMMs {
			for _, m := range job.Modes {
				s, err := shapeOf(cfg, g, m)
				if err != nil || seen[s] { // a row that cannot run counts nothing
					continue
				}
				seen[s] = true
				total += shapeWork(cfg, s)
			}
		}
	}
	return total * float64(selection.EnsembleRuns(cfg))
}

// WarpStepsSimulated is the number of warp k-steps the process's SMs have
// simulated so far (sim/sm's work meter): progress lines compare its
// growth with EstimateKSteps.
func WarpStepsSimulated() uint64 { return sm.WarpStepsSimulated() }

// EstimateSeconds converts simulated work to seconds on one core.
func EstimateSeconds(work float64) float64 { return work / WarpStepsPerSecond }

// DescribeWork renders an estimate for messages.
func DescribeWork(work float64) string {
	sec := EstimateSeconds(work)
	t := fmt.Sprintf("%.0f s", sec)
	switch {
	case sec >= 7200:
		t = fmt.Sprintf("%.1f h", sec/3600)
	case sec >= 120:
		t = fmt.Sprintf("%.0f min", sec/60)
	}
	return fmt.Sprintf("%.3g warp k-steps, about %s of one core", work, t)
}

func shapeWork(cfg *configs.Config, g kernel.Shape) float64 {
	plans, _ := selection.Rank(cfg, g)
	if len(plans) == 0 {
		return 0
	}
	if cfg.Sim.Fidelity == configs.FidelityFast {
		if _, refused := selection.FastTimes(cfg, plans); refused == "" {
			return 0 // no instruction simulated
		}
	}
	work, full, retime := 0.0, 0.0, 0.0
	for _, p := range plans {
		if !p.Schedule.Cuttable() {
			// Serial split-K and stream-K are simulated whole, every
			// CTA and k-step with no fast path, and that sample is the
			// record (selection.SampleEstimate).
			steps := float64(p.TotalKSteps() * p.Warps)
			work += steps
			retime = math.Max(retime, steps)
			continue
		}
		// Under power_capped, the chosen kernel is simulated again at
		// each clock the cap tries (selection.CapClock), whole in K.
		retime = math.Max(retime, simulatedCTAs(cfg, p, cfg.Sim.ExtrapolateWaves)*
			float64(p.TotalKSteps())/float64(p.CTAs)*float64(p.Warps))
		// waves: the launch has waves enough to be extrapolated; a sample
		// without them is the whole kernel. The fast-forward's left-out
		// k-steps are counted as simulated (their L2 touch is O(K);
		// an over-count: issue 35 item 1, not yet modelled).
		_, waves := gpu.ExtrapolatedLaunch(p, cfg.GPU.SMCount*p.Occupancy)
		whole := selection.SampledWhole(p)
		samples := selection.SampleKSteps/2 + selection.SampleKSteps
		if whole {
			samples = p.KSteps
		}
		work += simulatedCTAs(cfg, p, true) * float64(samples*p.Warps)
		// The record: the samples themselves under the default
		// extrapolations or where the sample was the whole kernel, else
		// a run of its own.
		if reuse := (cfg.Sim.ExtrapolateWaves && (whole || cfg.Sim.ExtrapolateKSteps)) ||
			(whole && !waves); !reuse {
			k := p.KSteps
			if selection.LongInK(cfg, p) {
				k = selection.SampleKSteps/2 + selection.SampleKSteps
			}
			full = math.Max(full, simulatedCTAs(cfg, p, cfg.Sim.ExtrapolateWaves)*
				float64(k*p.Warps))
		}
	}
	if cfg.GPU.ClockPolicy == energy.PowerCapped {
		work += RetimedClocks * retime
	}
	return work + full
}

// RetimedClocks is how many clocks besides the first a power-capped
// kernel is simulated at: energy.HighestFitting tries the predicted clock
// and then one step up (it fits) or down until one fits; one step is the
// common case (the V/f prediction is usually right), counted as two runs
// so that a miss by one step is still within the estimate.
const RetimedClocks = 2

// simulatedCTAs is how many CTAs a simulation of the plan runs: all, or
// the first waves when extrapolating (as gpu.ExtrapolatedLaunch decides).
func simulatedCTAs(cfg *configs.Config, p *kernel.Plan, extrapolate bool) float64 {
	if !extrapolate {
		return float64(p.CTAs)
	}
	n, _ := gpu.ExtrapolatedLaunch(p, cfg.GPU.SMCount*p.Occupancy)
	return float64(n)
}
