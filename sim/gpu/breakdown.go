package gpu

import (
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/sm"
)

// closedIdle is the idle account at the kernel's end with each tensor
// core's time after its last MMA added: to the tail until its SM's last
// CTA finished and after the kernel's last CTA (the split-K reduction),
// to wave quantization in between (the SM had no CTA left to run).
func (g *GPU) closedIdle(end uint64) [sm.NumReasons]uint64 {
	idle := g.Acct.Idle
	kend := min(g.EndCycle, end)
	per := len(g.Acct.LastEnd) / max(1, len(g.sms))
	for u, last := range g.Acct.LastEnd {
		done := g.sms[u/max(1, per)].LastFinish
		if t := min(done, kend); t > last {
			idle[sm.WhyTail] += t - last
		}
		if t := max(done, last); kend > t {
			idle[sm.WhyWaves] += kend - t
		}
		idle[sm.WhyTail] += end - kend
	}
	return idle
}

// breakdown closes the account at the kernel's end and returns the
// shares of every cause in the tensor cores' total time.
func (g *GPU) breakdown(end uint64) results.Breakdown {
	return Shares(g.Acct.Busy, g.closedIdle(end))
}

// Shares normalises busy and idle cycles into a breakdown (sums to 1).
func Shares(busy uint64, idle [sm.NumReasons]uint64) results.Breakdown {
	total := float64(busy)
	for _, v := range idle {
		total += float64(v)
	}
	if total == 0 {
		return results.Breakdown{}
	}
	f := func(r ...sm.Reason) float64 {
		var v uint64
		for _, x := range r {
			v += idle[x]
		}
		return float64(v) / total
	}
	return results.Breakdown{Compute: float64(busy) / total, Smem: f(sm.WhySmem),
		L2Bandwidth: f(sm.WhyL2BW), L2Latency: f(sm.WhyL2),
		DRAMBandwidth: f(sm.WhyDRAMBW), DRAMLatency: f(sm.WhyDRAM),
		Barrier: f(sm.WhyBarrier), Dependence: f(sm.WhyDependence), Issue: f(sm.WhyIssue),
		RegisterFile: f(sm.WhyRegFile), TensorPipe: f(sm.WhyCompute),
		Launch: f(sm.WhyLaunch, sm.WhyStage), Tail: f(sm.WhyTail),
		Waves: f(sm.WhyWaves), Fixup: f(sm.WhyFixup)}
}

// SetAccount sets the result's raw tensor-core account, busy and idle
// cycles by reason, and the breakdown built from it. Where a fast path
// extended the cycles beyond what the account holds (cycles x tensor
// cores above busy + idle), the difference is the tail's: the one place
// the breakdown of an extended result is closed.
func (r *Result) SetAccount(busy uint64, idle [sm.NumReasons]uint64, prologue uint64) {
	r.fillAccount(busy, &idle, sm.WhyTail)
	r.Busy, r.Idle, r.Prologue = busy, idle, prologue
	r.Breakdown = Shares(busy, idle)
	r.Phases = phasesOf(busy, idle, prologue)
}

// fillAccount books to why what the result's cycles over every tensor
// core hold beyond busy and idle.
func (r *Result) fillAccount(busy uint64, idle *[sm.NumReasons]uint64, why sm.Reason) {
	sum := busy
	for _, v := range idle {
		sum += v
	}
	if all := r.Cycles * uint64(r.TCUnits); all > sum {
		idle[why] += all - sum
	}
}

// phasesOf splits a tensor-core account into phases (results.Phases):
// launch, epilogue and the last wave from the idle reasons that are
// theirs, the prologue from the account's prologue (idle already booked
// to the causes of a run of MMAs, sm.InLoop), the mainloop the rest.
func phasesOf(busy uint64, idle [sm.NumReasons]uint64, prologue uint64) results.Phases {
	total := float64(busy)
	var loop uint64
	for r, v := range idle {
		total += float64(v)
		if sm.InLoop(sm.Reason(r)) {
			loop += v
		}
	}
	if total == 0 {
		return results.Phases{}
	}
	prologue = min(prologue, loop)
	f := func(v uint64) float64 { return float64(v) / total }
	return results.Phases{
		Launch:   f(idle[sm.WhyLaunch] + idle[sm.WhyStage]),
		Prologue: f(prologue),
		Mainloop: f(busy + loop - prologue),
		Epilogue: f(idle[sm.WhyTail] + idle[sm.WhyFixup]),
		LastWave: f(idle[sm.WhyWaves]),
	}
}
