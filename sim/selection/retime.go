package selection

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/sm"
)

// Probe re-timing (sim.retime_probe_ksteps): the power cap's re-timing
// (CapClock) needs the kernel's record at each clock it tries. The SM
// clock changes a kernel's time only through the memory system's clock
// domains (configAt: the DRAM's bytes per SM cycle and its latency in SM
// cycles), and every CTA of a kernel long in K meets them in the same
// steady k-steps. So instead of the whole kernel at each clock, a probe,
// the same grid cut to sim.retime_probe_ksteps k-steps per CTA
// (kernel.Plan.WithKSteps; wave-extrapolated from its tracked waves and
// its last where it has two more, kernel.Plan.RetimeProbe: both probes
// alike, so that what extrapolation misses cancels in their change),
// runs at the locked clock once and at each
// clock tried, and every counter of the locked record (cycles, the
// tensor-core account, traffic, energy events) moves by the same
// counter's change between the probe's two runs, scaled up to the
// record's k-steps (scaledByProbe). TestProbeRetimeAgrees bounds it
// against the whole re-timing.

// retimer simulates kernel k again at a clock CapClock tries.
type retimer func(mhz int) (*gpu.Result, error)

// retimerFor is how CapClock re-times k under cfg: from probes where
// probeOf gives one, else the whole kernel at each clock.
func retimerFor(cfg *configs.Config, k *gpu.Result, obs gpu.Observer) retimer {
	whole := func(mhz int) (*gpu.Result, error) {
		return simulate(configAt(cfg, mhz), k.Plan, gpu.Options{Observer: obs})
	}
	probe := probeOf(cfg, k.Plan)
	if probe == nil || k.ClockMHz != cfg.GPU.ClockMHz {
		return whole
	}
	var locked *gpu.Result
	return func(mhz int) (*gpu.Result, error) {
		if locked == nil {
			r, err := simulate(cfg, probe, gpu.Options{Observer: obs})
			if err != nil {
				return nil, err
			}
			locked = r
		}
		at, err := simulate(configAt(cfg, mhz), probe, gpu.Options{Observer: obs})
		if err != nil {
			return nil, err
		}
		return scaledByProbe(k, locked, at, cfg.GPU.SMCount), nil
	}
}

// probeOf is the plan p's probe under cfg, or nil where p is re-timed
// whole: the key is 0, p cannot be cut in K (serial split-K, stream-K,
// a GEMV), or its CTAs run fewer than twice the probe's k-steps.
func probeOf(cfg *configs.Config, p *kernel.Plan) *kernel.Plan {
	n := cfg.Sim.RetimeProbeKSteps
	if n <= 0 || !p.Schedule.Cuttable() || p.Schedule == kernel.GEMV ||
		min(p.KSteps, p.LastKSteps) < 2*n {
		return nil
	}
	probe := p.WithKSteps(n)
	probe.RetimeProbe = true
	return probe
}

// scaledByProbe is record k at probe at's clock: each counter of k
// moved by that counter's change from the probe at k's clock (locked)
// to the probe at at's, times the k-steps of k over the probe's. The
// clock moves a long kernel's steady k-steps, which the probe has in
// that proportion, more than its fixed costs: on DRAM-bound kernels at
// 1005 and 705 MHz the change so scaled came within 2 % of the whole
// re-timing, where scaling each counter by its ratio in the probe (which
// takes the fixed costs as moving alike) was 6 % off (retime_test.go).
func scaledByProbe(k, locked, at *gpu.Result, sms int) *gpu.Result {
	scale := float64(k.Plan.TotalKSteps()) / float64(max(1, at.Plan.TotalKSteps()))
	f := func(x, l, a uint64) uint64 {
		return uint64(max(0, float64(x)+(float64(a)-float64(l))*scale) + 0.5)
	}
	r := *k
	// The cycles move by the probes' change in their time less the
	// last-wave idle (sm.WhyWaves over the tensor cores): which SM takes
	// the last CTAs is a race the clock can flip (one SM running two
	// CTAs on alone at one clock, none at the next), and in a probe of
	// short CTAs that flip is a share of its time the whole kernel's
	// would not have, multiplied here by the k-steps ratio. The record's
	// own last wave, tail and straggler are kept.
	r.Cycles = uint64(max(0, float64(k.Cycles)+(workOf(at, sms)-workOf(locked, sms))*scale) + 0.5)
	r.TCBusy = f(k.TCBusy, locked.TCBusy, at.TCBusy)
	r.SmemBytes = f(k.SmemBytes, locked.SmemBytes, at.SmemBytes)
	r.FlushCycles = f(k.FlushCycles, locked.FlushCycles, at.FlushCycles)
	r.WritebackBytes = f(k.WritebackBytes, locked.WritebackBytes, at.WritebackBytes)
	r.Mem = k.Mem
	r.Act = k.Act
	gpu.Extend(r.Mem.Counters(), locked.Mem.Counters(), at.Mem.Counters(), f)
	gpu.Extend(r.Act.Counters(), locked.Act.Counters(), at.Act.Counters(), f)
	busy := f(k.Busy, locked.Busy, at.Busy)
	var idle = k.Idle
	for i := range idle {
		if sm.Reason(i) != sm.WhyWaves {
			idle[i] = f(k.Idle[i], locked.Idle[i], at.Idle[i])
		}
	}
	r.SetAccount(busy, idle, f(k.Prologue, locked.Prologue, at.Prologue))
	r.RunCycles = nil // as a whole re-timing: one unperturbed run
	r.ClockMHz = at.ClockMHz
	r.ProbeKSteps = at.Plan.KSteps
	return &r
}

// workOf is r's time less its last wave's idle, on sms SMs: the mean
// cycles until its SM's last CTA ended, over the tensor cores of the
// SMs that ran one (the first wave goes one CTA to each SM before any
// gets a second, so min(sms, CTAs) of them; the others' whole time is
// last-wave idle).
func workOf(r *gpu.Result, sms int) float64 {
	used := float64(r.TCUnits) * float64(min(sms, r.Plan.CTAs)) / float64(max(1, sms))
	return (float64(r.TCUnits)*float64(r.Cycles) - float64(r.Idle[sm.WhyWaves])) / max(1, used)
}
