package sim

import "github.com/stcsim/stcsim/memory"

// reason is what a warp, and through it a tensor core, was waiting for.
type reason uint8

const (
	whyCompute    reason = iota // the tensor core's own pipe had not taken the previous MMA
	whySmem                     // a fragment from shared memory, or the MIO queue
	whyL2                       // a cp.async stage from L2: its unloaded latency
	whyDRAM                     // a cp.async stage from DRAM: its unloaded latency
	whyBarrier                  // BAR.SYNC: the CTA's other warps
	whyDependence               // a register written by an earlier instruction (accumulator, address)
	whyIssue                    // issue slots: the scheduler was issuing other instructions
	whyRegFile                  // register-file read ports
	whyStage                    // a cp.async group not yet back (resolved to L2, DRAM or smem)
	whyLaunch                   // kernel launch, CTA dispatch and launch, the first instructions
	whyL2BW                     // a cp.async stage from L2: queueing beyond its latency
	whyDRAMBW                   // a cp.async stage from DRAM: queueing beyond its latency
	whyTail                     // after a sub-partition's last MMA of a CTA: its epilogue, split-K reduction
	whyWaves                    // the SM had no CTA left to run while others still worked
	numReasons
)

// timeAccount attributes every tensor-core cycle of a kernel: busy (issue
// slots occupied) or idle, and when idle, to the reason the run that ended
// the gap was late. Summed over all tensor cores, it is the kernel's time
// breakdown.
type timeAccount struct {
	lastEnd []uint64
	busy    uint64
	idle    [numReasons]uint64
}

// init opens the account for units tensor cores at the kernel's launch
// (the launch latency is idle time of every unit).
func (a *timeAccount) init(units int, launch uint64) {
	a.lastEnd = make([]uint64, units)
	for u := range a.lastEnd {
		a.lastEnd[u] = launch
	}
	a.idle[whyLaunch] = launch * uint64(units)
}

// idleFor books gap idle cycles of unit u to the reasons in stall (the
// cycles the warp that ended the gap waited on each during it),
// proportionally if they exceed it; cycles of the gap before that warp
// existed go to before.
func (a *timeAccount) idleFor(gap uint64, stall *[numReasons]uint64, before func(uint64)) {
	var sum uint64
	for _, v := range stall {
		sum += v
	}
	if sum <= gap {
		for i, v := range stall {
			a.idle[i] += v
		}
		if gap > sum {
			before(gap - sum)
		}
		return
	}
	left := gap
	best := whyLaunch
	for i, v := range stall {
		share := gap * v / sum
		a.idle[i] += share
		left -= share
		if v > stall[best] {
			best = reason(i)
		}
	}
	a.idle[best] += left
}

// chargeIdle books the tensor core's idle gap [sp.lastMMA, now) before
// the MMA warp w issues now: the cycles w waited on each cause during
// the gap, and the cycles before w's CTA started to the previous CTA's
// tail (until it finished on this SM) and to launch (after).
func (sp *subPartition) chargeIdle(w *warp, now uint64) {
	acct := &sp.sm.env.count.acct
	if now > sp.lastMMA {
		from := sp.lastMMA
		acct.idleFor(now-from, &w.stall, func(n uint64) {
			tail := min(n, max(sp.sm.lastFinish, from)-from)
			acct.idle[whyTail] += tail
			acct.idle[whyLaunch] += n - tail
		})
	}
	w.stall = [numReasons]uint64{}
	sp.epoch++
}

// fillCause splits the trip of an LDGSTS chunk's fill (memory.FillDone)
// over the breakdown's reasons, as weights summing to 1: all to smem when
// the bank array's write queue was its longest wait; else its last line's
// unloaded latency to the level it came from (DRAM when it missed L2,
// else L2), its queueing to the level of the longest queue (a DRAM
// channel: DRAM bandwidth; an L2 slice or the SM's crossbar port: L2
// bandwidth), and the rest of the trip, the wait of a hit for a DRAM fill
// already in flight, to DRAM: latency up to dram.latency, bandwidth
// beyond (the fill it waited for was queueing).
func (e *smEnv) fillCause(d memory.FillDone) (w [numReasons]float64) {
	c := d.Cause()
	if c == memory.CauseSmem {
		w[whySmem] = 1
		return w
	}
	lat, bw := whyL2, whyL2BW
	if c.IsDRAM() || d.Info.DRAMSectors > 0 {
		lat = whyDRAM
	}
	if c == memory.CauseDRAMBandwidth {
		bw = whyDRAMBW
	}
	u, q := d.Info.Unloaded(), d.Info.Queued()
	merge := max(0, float64(d.Arrived-d.Issued)-u-q)
	mLat := min(merge, float64(e.cfg.Memory.DRAM.Latency))
	w[lat] += u
	w[bw] += q
	w[whyDRAM] += mLat
	w[whyDRAMBW] += merge - mLat
	total := u + q + merge
	if total <= 0 {
		var one [numReasons]float64
		one[lat] = 1
		return one
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

// closedIdle is the idle account at the kernel's end with each tensor
// core's time after its last MMA added: to the tail until its SM's last
// CTA finished and after the kernel's last CTA (the split-K reduction),
// to wave quantization in between (the SM had no CTA left to run).
func (g *gpu) closedIdle(end uint64) [numReasons]uint64 {
	idle := g.acct.idle
	kend := min(g.endCycle, end)
	per := len(g.acct.lastEnd) / max(1, len(g.sms))
	for u, last := range g.acct.lastEnd {
		done := g.sms[u/max(1, per)].lastFinish
		if t := min(done, kend); t > last {
			idle[whyTail] += t - last
		}
		if t := max(done, last); kend > t {
			idle[whyWaves] += kend - t
		}
		idle[whyTail] += end - kend
	}
	return idle
}

// breakdown closes the account at the kernel's end and returns the
// shares of every cause in the tensor cores' total time.
func (g *gpu) breakdown(end uint64) Breakdown {
	return shares(g.acct.busy, g.closedIdle(end))
}

// shares normalises busy and idle cycles into a breakdown (sums to 1).
func shares(busy uint64, idle [numReasons]uint64) Breakdown {
	total := float64(busy)
	for _, v := range idle {
		total += float64(v)
	}
	if total == 0 {
		return Breakdown{}
	}
	f := func(r ...reason) float64 {
		var v uint64
		for _, x := range r {
			v += idle[x]
		}
		return float64(v) / total
	}
	return Breakdown{Compute: float64(busy) / total, Smem: f(whySmem),
		L2Bandwidth: f(whyL2BW), L2Latency: f(whyL2),
		DRAMBandwidth: f(whyDRAMBW), DRAMLatency: f(whyDRAM),
		Barrier: f(whyBarrier), Dependence: f(whyDependence), Issue: f(whyIssue),
		RegisterFile: f(whyRegFile), TensorPipe: f(whyCompute),
		Launch: f(whyLaunch, whyStage), Tail: f(whyTail),
		Waves: f(whyWaves)}
}

// note charges the cycles since the warp's last note, within the
// sub-partition's current tensor-core idle gap (from sp.lastMMA), to
// what it was waiting on, and records what it waits on from now. A new
// gap (an MMA issued since) starts the warp's window afresh.
func (w *warp) note(why reason, now uint64) {
	sp := w.sp
	if w.epoch != sp.epoch {
		w.stall = [numReasons]uint64{}
		w.epoch = sp.epoch
	}
	if from := max(w.since, sp.lastMMA); now > from {
		w.stall[w.why] += now - from
	}
	w.since, w.why = now, why
}

// stageResolved books the warp's wait for cp.async groups, once its
// DEPBAR passes, to what the last group waited on (gpu.fillCause: smem,
// or L2 and DRAM latency and bandwidth).
func (w *warp) stageResolved(reason) {
	wait := w.stall[whyStage]
	w.stall[whyStage] = 0
	g := w.stageWho
	if wait == 0 {
		return
	}
	if g == nil {
		w.stall[whyL2] += wait
		return
	}
	left, best := wait, whyL2
	for r, f := range g.share {
		n := uint64(f * float64(wait))
		w.stall[r] += n
		left -= n
		if f > g.share[best] {
			best = reason(r)
		}
	}
	w.stall[best] += left
}
