package sm

import (
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
)

// pollLoop is the cycles between a flag poll's return and the next
// poll's issue: thread 0's compare (ISETP, the ALU latency) and the
// loop's branch.
const pollLoop = aluLatency + 1

// fixup is a CTA's wait on its running segment's flag: CUTLASS's
// Semaphore::wait and Barrier::wait_eq have thread 0 poll the flag with
// acquire loads (through L2, not L1) until it holds the value, then sync
// the CTA. Every warp stops at the segment's WAIT; warp 0's arrival
// starts the polls, whose loads go through the memory hierarchy; the
// value a poll sees is the flag's at the cycle its data is back.
type fixup struct {
	polling bool
	done    bool   // the flag held the value: WAIT passes
	since   uint64 // the first poll's issue
	// fenced is warp 0 at a SIGNAL waiting for the CTA's stores.
	fenced *Warp
}

// wait runs WAIT for warp w: it passes once the segment's wait is done,
// else the warp stops there (warp 0 starting the polls).
func (w *Warp) wait(now uint64) {
	c := w.CTA
	if c.fix.done {
		return
	}
	w.atWait = true
	if w.id == 0 && !c.fix.polling {
		c.fix.polling, c.fix.since = true, now
		c.poll(now)
	}
}

// poll issues one flag load at cycle now and, when its data is back,
// releases the CTA or polls again.
func (c *CTA) poll(now uint64) {
	env := c.SM.env
	e := c.Epi()
	n := env.Count
	n.FlagPolls++
	n.FixupBytes += 4
	n.Issued += 3 // LDG.STRONG.GPU, ISETP, BRA
	n.IssuedOp[isa.OpLDG]++
	n.IssuedOp[isa.OpALU]++
	n.IssuedOp[isa.OpBRA]++
	env.Mem.Read(now, c.SM.ID, memory.CRead, c.FlagRegion(), false, func(at uint64) {
		c.SM.At(at, func() {
			if env.Flags.Value(e.Flag) != e.Wait {
				c.poll(at + pollLoop)
				return
			}
			c.released(at)
		})
	})
}

// released ends the CTA's wait at cycle at: the CTA syncs and every warp
// at WAIT goes on.
func (c *CTA) released(at uint64) {
	c.fix.done, c.fix.polling = true, false
	c.SM.env.Count.FixupWait += at - c.fix.since
	resume := at + uint64(c.SM.env.Config.SM.BarrierLatency)
	for _, w := range c.Warps {
		if w.atWait {
			w.atWait = false
			w.earliest = max(w.earliest, resume)
			w.SP.wake(resume)
		}
	}
}

// signal runs warp 0's SIGNAL (its CTA's stores all accepted, readyAt's
// fence): the flag's store or reduction, applied when the L2 takes it.
// The CTA finishes only once it has.
func (c *CTA) signal(now uint64) {
	env := c.SM.env
	e := c.Epi()
	env.Count.FixupBytes += 4
	c.stores++
	env.Mem.Write(now, c.SM.ID, memory.DWrite, c.FlagRegion(), func(at uint64) {
		c.SM.At(at, func() {
			if e.Signal == kernel.SignalAdd {
				env.Flags.Add(e.Flag, 1)
			} else {
				env.Flags.Set(e.Flag, e.Value)
			}
		})
		c.storeDone(at)
	})
}

// next runs NEXT: the warp goes on to the CTA's next segment, whose
// program it starts at the prologue (the first warp there moves the CTA
// on; every warp is past the segment's last barrier by then). The
// cp.async groups of the last k-steps were empty and are dropped.
func (w *Warp) next(now uint64) {
	c := w.CTA
	if w.seg == c.Seg {
		c.Advance()
		c.fix = fixup{}
	}
	w.seg++
	w.prog = c.CTA.Program(w.id)
	w.rft = c.SM.env.rfTable(w.prog)
	if len(w.ready) < w.prog.Regs {
		w.ready = append(w.ready, make([]uint64, w.prog.Regs-len(w.ready))...)
	}
	w.groups = w.groups[:0]
	w.open = newCPGroup(w)
	w.section, w.pc, w.iter = 0, 0, 0
	w.operands.in = nil
}
