package selection

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
)

// K extrapolation (sim.extrapolate_ksteps): a kernel whose CTAs run more
// than 2 x sampleKSteps k-steps reaches a steady state in K long before
// its end: every k-step of a CTA issues the same instructions, copies a
// stage of the same size and waits on the same structures. Such a kernel
// is simulated twice, at sampleKSteps/2 (48) and sampleKSteps (96) k-steps per CTA
// (the same grid, prologue and epilogue), and every counter of the record
// (cycles, tensor-core busy and idle cycles by cause, traffic per class,
// shared-memory bytes, energy events) is extended along the line through
// the two: x(K) = x(k2) + (x(k2) - x(k1)) (K - k2) / (k2 - k1). Fixed
// costs (launch, prologue, epilogue, the split-K reduction, the last
// wave's drain) are in both samples and counted once. The selection's
// estimate of a long kernel is the same fit (sampleEstimate), so with
// wave extrapolation on the record reuses the samples. Its agreement with
// the full simulation is tested (TestKExtrapolationCloseToFull).

// kSamples are the k-step counts the two samples run.
var KSamples = [2]int{SampleKSteps / 2, SampleKSteps}

// LongInK says whether a plan is extrapolated in K under cfg.
func LongInK(cfg *configs.Config, p *kernel.Plan) bool {
	return cfg.Sim.ExtrapolateKSteps && !SampledWhole(p)
}

// simulateRecord simulates p's record (recordOf: the whole kernel, or
// under K extrapolation the two K samples, the second's result extended
// to p's k-steps).
func simulateRecord(cfg *configs.Config, p *kernel.Plan, obs gpu.Observer, run int) (*gpu.Result, error) {
	sims := recordOf(cfg, p)
	rs := make([]*gpu.Result, len(sims))
	for i, s := range sims {
		o := obs
		if len(sims) > 1 && i == 0 { // the first K sample is a sample
			o = samplesFor(obs)
		}
		r, err := simulate(cfg, s.Plan, gpu.Options{Observer: o, Run: run})
		if err != nil {
			return nil, err
		}
		rs[i] = r
	}
	if len(rs) == 1 {
		return rs[0], nil
	}
	return extendInK(p, rs[0], rs[1]), nil
}

// extendInK is b (at kSamples[1] k-steps) extended to p's k-steps along
// the line through a (at kSamples[0]) and b.
func extendInK(p *kernel.Plan, a, b *gpu.Result) *gpu.Result {
	span := float64(KSamples[1] - KSamples[0])
	more := float64(p.KSteps - KSamples[1])
	f := func(x1, x2 uint64) uint64 {
		v := float64(x2) + (float64(x2)-float64(x1))*more/span
		return uint64(max(v, float64(x2)) + 0.5)
	}
	r := *b
	r.Plan = p
	r.Cycles = f(a.Cycles, b.Cycles)
	r.TCBusy = f(a.TCBusy, b.TCBusy)
	r.SmemBytes = f(a.SmemBytes, b.SmemBytes)
	r.FlushCycles = f(a.FlushCycles, b.FlushCycles)
	r.WritebackBytes = f(a.WritebackBytes, b.WritebackBytes)
	g := func(_, x1, x2 uint64) uint64 { return f(x1, x2) }
	gpu.Extend(r.Mem.Counters(), a.Mem.Counters(), b.Mem.Counters(), g)
	gpu.Extend(r.Act.Counters(), a.Act.Counters(), b.Act.Counters(), g)
	r.Busy = f(a.Busy, b.Busy)
	for i := range r.Idle {
		r.Idle[i] = f(a.Idle[i], b.Idle[i])
	}
	// The k-steps beyond the second sample take at least their tensor-core
	// issue time, spread over every tensor core: a line flatter than that
	// (the first sample's waves queued where the second's did not) would
	// run the tensor cores above their peak.
	if units := uint64(max(1, r.TCUnits)); r.TCBusy > b.TCBusy {
		if floor := b.Cycles + (r.TCBusy-b.TCBusy+units-1)/units; r.Cycles < floor {
			r.Cycles, r.KBounded = floor, true
		}
	}
	r.SetAccount(r.Busy, r.Idle, f(a.Prologue, b.Prologue))
	r.KExtrapolated = true
	return &r
}
