package sm

import (
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
)

// Reason is what a warp, and through it a tensor core, was waiting for.
type Reason uint8

const (
	WhyCompute    Reason = iota // the tensor core's own pipe had not taken the previous MMA
	WhySmem                     // a fragment from shared memory, or the MIO queue
	WhyL2                       // a cp.async stage from L2: its unloaded latency
	WhyDRAM                     // a cp.async stage from DRAM: its unloaded latency
	WhyBarrier                  // BAR.SYNC: the CTA's other warps
	WhyDependence               // a register written by an earlier instruction (accumulator, address)
	WhyIssue                    // issue slots: the scheduler was issuing other instructions
	WhyRegFile                  // register-file read ports
	WhyStage                    // a cp.async group not yet back (resolved to L2, DRAM or smem)
	WhyLaunch                   // kernel launch, CTA dispatch and launch, the first instructions
	WhyL2BW                     // a cp.async stage from L2: queueing beyond its latency
	WhyDRAMBW                   // a cp.async stage from DRAM: queueing beyond its latency
	WhyTail                     // after a sub-partition's last MMA of a CTA: its epilogue, split-K reduction
	WhyWaves                    // the SM had no CTA left to run while others still worked
	WhyFixup                    // a flag in global memory (serial split-K's semaphore, stream-K's peers), or the fence before signalling one
	NumReasons
)

// Account attributes every tensor-core cycle of a kernel: busy (issue
// slots occupied) or idle, and when idle, to the reason the run that ended
// the gap was late. Summed over all tensor cores, it is the kernel's time
// breakdown.
//
// Prologue is the part of the idle time (already in Idle by cause) that
// ended in a warp's first MMA after the warp started: its CTA's pipeline
// fill, the prologue's cp.async stages and first fragments, as far as
// the tensor core had nothing else to do (Phases).
type Account struct {
	LastEnd  []uint64
	Busy     uint64
	Idle     [NumReasons]uint64
	Prologue uint64
}

// InLoop reports whether idle time for reason r is spent inside a CTA's
// run of MMAs (a cause, which a warp's first MMA makes prologue), rather
// than the launch, the epilogue or the last wave.
func InLoop(r Reason) bool {
	switch r {
	case WhyLaunch, WhyStage, WhyTail, WhyWaves, WhyFixup:
		return false
	}
	return true
}

// inLoop is the idle time booked so far to the causes of a run of MMAs.
func (a *Account) inLoop() uint64 {
	var n uint64
	for r, v := range a.Idle {
		if InLoop(Reason(r)) {
			n += v
		}
	}
	return n
}

// Init opens the account for units tensor cores at the kernel's launch
// (the launch latency is idle time of every unit).
func (a *Account) Init(units int, launch uint64) {
	a.LastEnd = make([]uint64, units)
	for u := range a.LastEnd {
		a.LastEnd[u] = launch
	}
	a.Idle[WhyLaunch] = launch * uint64(units)
}

// idleFor books gap idle cycles of unit u to the reasons in stall (the
// cycles the warp that ended the gap waited on each during it),
// proportionally if they exceed it; cycles of the gap before that warp
// existed go to before.
func (a *Account) idleFor(gap uint64, stall *[NumReasons]uint64, before func(uint64)) {
	var sum uint64
	for _, v := range stall {
		sum += v
	}
	if sum <= gap {
		for i, v := range stall {
			a.Idle[i] += v
		}
		if gap > sum {
			before(gap - sum)
		}
		return
	}
	left := gap
	best := WhyLaunch
	for i, v := range stall {
		share := gap * v / sum
		a.Idle[i] += share
		left -= share
		if v > stall[best] {
			best = Reason(i)
		}
	}
	a.Idle[best] += left
}

// chargeIdle books the tensor core's idle gap [sp.lastMMA, now) before
// the MMA warp w issues now: the cycles w waited on each cause during
// the gap, and the cycles before w's CTA started to the previous CTA's
// tail (until it finished on this SM) and to launch (after).
//
// When the MMA is w's first, what the gap charged to the causes of a
// run of MMAs (InLoop) is also the prologue's (Account.Prologue).
func (sp *SubPartition) chargeIdle(w *Warp, now uint64) {
	acct := &sp.sm.env.Count.Acct
	first := !w.mmaBegun
	w.mmaBegun = true
	if now > sp.lastMMA {
		from := sp.lastMMA
		var before uint64
		if first {
			before = acct.inLoop()
		}
		acct.idleFor(now-from, &w.stall, func(n uint64) {
			tail := min(n, max(sp.sm.LastFinish, from)-from)
			acct.Idle[WhyTail] += tail
			acct.Idle[WhyLaunch] += n - tail
		})
		if first {
			acct.Prologue += acct.inLoop() - before
		}
	}
	w.stall = [NumReasons]uint64{}
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
func (e *Env) fillCause(d memory.FillDone) (w [NumReasons]float64) {
	c := d.Cause()
	if c == memory.CauseSmem {
		w[WhySmem] = 1
		return w
	}
	lat, bw := WhyL2, WhyL2BW
	if c.IsDRAM() || d.Info.DRAMSectors > 0 {
		lat = WhyDRAM
	}
	if c == memory.CauseDRAMBandwidth {
		bw = WhyDRAMBW
	}
	u, q := d.Info.Unloaded(), d.Info.Queued()
	merge := max(0, float64(d.Arrived-d.Issued)-u-q)
	mLat := min(merge, float64(e.Config.Memory.DRAM.Latency))
	w[lat] += u
	w[bw] += q
	w[WhyDRAM] += mLat
	w[WhyDRAMBW] += merge - mLat
	total := u + q + merge
	if total <= 0 {
		var one [NumReasons]float64
		one[lat] = 1
		return one
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

// note charges the cycles since the warp's last note, within the
// sub-partition's current tensor-core idle gap (from sp.lastMMA), to
// what it was waiting on, and records what it waits on from now. A new
// gap (an MMA issued since) starts the warp's window afresh.
func (w *Warp) note(why Reason, now uint64) {
	sp := w.SP
	if w.epoch != sp.epoch {
		w.stall = [NumReasons]uint64{}
		w.epoch = sp.epoch
	}
	if from := max(w.since, sp.lastMMA); now > from {
		w.stall[w.why] += now - from
	}
	w.since, w.why = now, why
}

// stageResolved books the warp's wait for cp.async groups, once its
// DEPBAR passes, to what the last group waited on (Env.fillCause: smem,
// or L2 and DRAM latency and bandwidth).
func (w *Warp) stageResolved(Reason) {
	wait := w.stall[WhyStage]
	w.stall[WhyStage] = 0
	g := w.stageWho
	if wait == 0 {
		return
	}
	if g == nil {
		w.stall[WhyL2] += wait
		return
	}
	left, best := wait, WhyL2
	for r, f := range g.share {
		n := uint64(f * float64(wait))
		w.stall[r] += n
		left -= n
		if f > g.share[best] {
			best = Reason(r)
		}
	}
	w.stall[best] += left
}

// loadOf is the register of in's sources that an operand LDG wrote and
// that is ready last (-1: the latest source is no operand load's).
func (w *Warp) loadOf(in *isa.Instr) int {
	if w.trips == nil {
		return -1
	}
	best, at := -1, uint64(0)
	for _, s := range in.Src {
		for i := range s.N {
			r := int(s.First) + int(i)
			if t := w.ready[r]; t >= at {
				best, at = r, t
			}
		}
	}
	if best < 0 || (w.trips[best] == 0 && w.ready[best] != Never) {
		return -1
	}
	return best
}

// loadResolved books the warp's wait for an operand load (WhyStage, as a
// cp.async stage's), once the instruction that read it issues, to where
// the load's trip went: a trip within the L2's far latency to L2
// latency, a longer one to DRAM latency up to dram.latency and to DRAM
// bandwidth (queueing) beyond it.
func (w *Warp) loadResolved(in *isa.Instr) {
	wait := w.stall[WhyStage]
	if wait == 0 {
		return
	}
	w.stall[WhyStage] = 0
	r := w.loadOf(in)
	trip := uint64(0)
	if r >= 0 {
		trip = w.trips[r]
	}
	mc := w.SP.sm.env.Config.Memory
	if trip <= uint64(mc.L2.FarLatency) {
		w.stall[WhyL2] += wait
		return
	}
	lat := min(trip, uint64(mc.DRAM.Latency))
	n := wait * lat / trip
	w.stall[WhyDRAM] += n
	w.stall[WhyDRAMBW] += wait - n
}
