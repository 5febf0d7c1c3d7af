package sim

import (
	"fmt"

	"github.com/sarchlab/akita/v3/tracing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/tensorcore"
)

// smUnit is one SM: an Akita component whose events advance the CTAs it
// hosts. Its sub-partitions' tensor cores and its shared memory are its
// parts; warps of a CTA go to sub-partition (warp id mod sub-partitions),
// as the hardware's warp schedulers are assigned.
type smUnit struct {
	*akita.ComponentBase
	gpu  *gpu
	id   int
	cb   clock.Callbacks
	tcs  []*tensorcore.Unit
	smem *memory.SharedMemory
}

// Handle runs the callbacks the SM scheduled for itself.
func (s *smUnit) Handle(e akita.Event) error {
	e.(*clock.Event).Fn()
	return nil
}

// at runs fn at cycle c (now or later) as one of the SM's own events; in
// an ensemble run, at a tie offset within that cycle (see jitter.go).
func (s *smUnit) at(c uint64, fn func()) {
	s.cb.AtOffset(s, c, s.gpu.jitter.tie(), fn)
}

// launchAt starts CTA idx on this SM at cycle c.
func (s *smUnit) launchAt(c uint64, idx int) {
	s.at(c, func() { newCTA(s, idx).launch(c) })
}

// cta is one threadblock in flight: its cp.async stages, its warps and the
// barrier that ends each k-step.
type cta struct {
	sm    *smUnit
	plan  *kernelPlan
	idx   int
	batch int
	tm    int
	tn    int
	split int

	stageParts  []int    // loads outstanding per k-step's stage
	stageIssue  []uint64 // cycle the stage's loads were issued
	stageLanded []uint64 // cycle the stage could be in shared memory had its writes not queued
	stageReady  []uint64 // cycle the stage landed in shared memory (0: not yet)
	stageWhy    []reason
	stageLast   []uint64 // Written of the stage's latest part so far

	kt        int    // k-step being computed or next to compute
	busy      bool   // a k-step is in progress
	arrived   int    // warps at the k-step's barrier
	barrier   uint64 // cycle the last warp reached the barrier
	barrierBy reason // what delayed the last warp
	lastDone  uint64 // last MMA result of the CTA
	results   int    // warps whose last MMA results are written back
}

func newCTA(s *smUnit, idx int) *cta {
	p := s.gpu.plan
	c := &cta{sm: s, plan: p, idx: idx}
	c.batch, c.tm, c.tn, c.split = p.ctaCoord(idx)
	// One slot per cp.async stage buffer, reused as the k-steps go by:
	// k-steps kt..kt+stages-1 are the only ones in flight, so memory does
	// not grow with K.
	slots := min(p.kSteps, p.tile.Stages)
	c.stageParts = make([]int, slots)
	c.stageIssue = make([]uint64, slots)
	c.stageReady = make([]uint64, slots)
	c.stageLanded = make([]uint64, slots)
	c.stageWhy = make([]reason, slots)
	c.stageLast = make([]uint64, slots)
	return c
}

// slot is the stage buffer of k-step k.
func (c *cta) slot(k int) int { return k % len(c.stageParts) }

// launch issues the multistage prologue: the first stages-1 k-steps'
// tiles, then waits for the first one.
func (c *cta) launch(now uint64) {
	c.traceStart(c.taskID(-1), "", "cta", fmt.Sprintf("CTA %d (%d,%d) split %d",
		c.idx, c.tm, c.tn, c.split))
	for k := 0; k < min(c.plan.tile.Stages-1, c.plan.kSteps); k++ {
		c.loadStage(now, k)
	}
	c.barrier = now
	c.barrierBy = whyLatency
}

// loadStage issues the cp.async copies of k-step k's A values, A metadata
// and B tiles; each is written into shared memory as it arrives.
func (c *cta) loadStage(now uint64, k int) {
	i := c.slot(k)
	c.stageIssue[i] = now
	c.stageReady[i] = 0
	c.stageLast[i] = 0
	c.stageLanded[i] = 0
	regions := c.stageRegions(k)
	for _, r := range regions {
		if r.region.Rows == 0 || r.region.RowBytes == 0 {
			continue
		}
		c.stageParts[i]++
	}
	g := c.sm.gpu
	for _, r := range regions {
		if r.region.Rows == 0 || r.region.RowBytes == 0 {
			continue
		}
		plan := g.filler.Plan(r.region, c.plan.smemLayout(r.class))
		g.filler.CpAsync(g.mem, c.sm.smem, now, c.sm.id, r.class, r.region,
			plan, func(d memory.FillDone) { c.partLanded(k, d) })
	}
}

// partLanded notes one load of stage k in shared memory; the stage is
// ready when all are.
func (c *cta) partLanded(k int, d memory.FillDone) {
	i := c.slot(k)
	c.stageParts[i]--
	if d.Written >= c.stageLast[i] {
		// The part written last is the one the stage waits for.
		c.stageLast[i] = d.Written
		c.stageWhy[i] = memoryReason(d.Cause())
	}
	c.stageLanded[i] = max(c.stageLanded[i], d.Unqueued)
	if c.stageParts[i] > 0 {
		return
	}
	c.stageReady[i] = max(c.stageLast[i], 1)
	c.tryStart()
}

// tryStart begins the next k-step once its stage has landed and every warp
// has passed the previous barrier.
func (c *cta) tryStart() {
	if c.busy || c.kt >= c.plan.kSteps {
		return
	}
	i := c.slot(c.kt)
	if c.stageReady[i] == 0 {
		return
	}
	start := max(c.sm.cb.Now(), c.barrier+uint64(c.sm.gpu.cfg.SM.BarrierLatency))
	why := c.barrierBy
	if c.stageReady[i] > start {
		why = c.stageWhy[i]
		if c.stageLanded[i] <= start {
			// The data was at the SM in time; its write into shared
			// memory queued behind other traffic and made the stage late.
			why = whySmem
		}
		start = c.stageReady[i]
	}
	c.busy = true
	c.sm.at(start, func() { c.compute(start, why) })
}

// compute runs k-step kt: the stage stages-1 ahead is issued into the
// buffer freed by the last barrier, and every warp loads its fragments and
// issues its MMAs.
func (c *cta) compute(now uint64, why reason) {
	p := c.plan
	if next := c.kt + p.tile.Stages - 1; next < p.kSteps {
		c.loadStage(now, next)
	}
	c.arrived = 0
	c.barrier = 0
	c.traceStart(c.taskID(c.kt), c.taskID(-1), "kstep", fmt.Sprintf("k-step %d", c.kt))
	for w := 0; w < p.warps; w++ {
		c.warpStep(now, w, why)
	}
}

// warpStep is one warp's k-step: ldmatrix of its A and B fragments (and
// metadata words for sparse), overlapped with its MMAs, which start when
// the first k-group's fragments are in registers.
func (c *cta) warpStep(now uint64, w int, why reason) {
	p := c.plan
	s := c.sm
	fragDone := s.smem.Access(now, p.ldsm, p.ldsm.BytesPerInstr)
	if p.metaFragB > 0 {
		fragDone = max(fragDone, s.smem.Access(now, p.metaLdsm, p.metaLdsm.BytesPerInstr))
	}
	first := c.firstFragment(now, fragDone)
	if why != whyL2 && why != whyDRAM &&
		first > now+uint64(s.gpu.cfg.Memory.SharedMemory.Latency) {
		// A k-step that waited for its tile keeps that reason: the fills
		// it then queues behind arrive at the memory's pace.
		why = whySmem
	}
	sp := w % len(s.tcs)
	s.at(first, func() { c.issueMMAs(first, w, sp, fragDone, why) })
}

// firstFragment estimates when the first k-group's fragments are in
// registers: the fragments stream in order, so the first group lands
// (groups-1)/groups of the transfer before the last.
func (c *cta) firstFragment(now, fragDone uint64) uint64 {
	p := c.plan
	bw := uint64(c.sm.gpu.cfg.Memory.SharedMemory.BytesPerClk)
	rest := uint64(p.fragBytes+p.metaFragB) * uint64(p.groups-1) /
		uint64(p.groups) / bw
	if fragDone-now > rest {
		return fragDone - rest
	}
	return now
}

// issueMMAs submits the warp's k-step to its sub-partition's tensor core
// as two runs: the k-groups before the last, and the last. The warp
// reaches the k-step's barrier once it has issued the first run (CUTLASS's
// multistage loop waits for the next stage and syncs before issuing the
// last k-group's MMAs, so the barrier and the next fragment loads hide
// under them).
func (c *cta) issueMMAs(now uint64, w, sp int, fragDone uint64, why reason) {
	p := c.plan
	tc := c.sm.tcs[sp]
	mode := p.shape.mode()
	unit := c.sm.id*len(c.sm.tcs) + sp
	interval := uint64(c.sm.gpu.issueInterval(p))
	account := func(count int, tcWhy reason) func(uint64) {
		return func(at uint64) {
			start := at - uint64(count-1)*interval
			if start > now {
				tcWhy = whyCompute
			}
			c.sm.gpu.acct.run(unit, start, at+interval, tcWhy)
		}
	}
	last := c.kt == p.kSteps-1
	head := (p.groups - 1) * p.mmaPerGrp
	if head == 0 {
		c.warpArrived(max(now, fragDone), why)
	} else {
		acc := account(head, why)
		tc.Submit(now, tensorcore.Request{Mode: mode,
			Precision: p.shape.Precision, Count: head,
			Issued: func(at uint64) {
				acc(at)
				arrive := max(at+1, fragDone)
				c.warpArrived(arrive, whySmemIf(fragDone > at+1, why))
			}})
	}
	tc.Submit(now, tensorcore.Request{Mode: mode,
		Precision: p.shape.Precision, Count: p.mmaPerGrp,
		Issued: account(p.mmaPerGrp, why),
		Done: func(at uint64) {
			if last {
				c.mmaDone(at)
			}
		}})
}

func whySmemIf(cond bool, otherwise reason) reason {
	if cond {
		return whySmem
	}
	return otherwise
}

// warpArrived records a warp at the k-step's barrier.
func (c *cta) warpArrived(at uint64, why reason) {
	if at >= c.barrier {
		c.barrier, c.barrierBy = at, why
	}
	c.arrived++
	if c.arrived < c.plan.warps {
		return
	}
	c.busy = false
	c.traceEnd(c.taskID(c.kt))
	c.kt++
	if c.kt < c.plan.kSteps {
		c.tryStart()
	}
}

// mmaDone counts the last k-step's MMA results; when every warp's are
// written back, the epilogue runs.
func (c *cta) mmaDone(at uint64) {
	c.lastDone = max(c.lastDone, at)
	c.results++
	if c.results < c.plan.warps {
		return
	}
	c.sm.at(c.lastDone, func() { c.epilogue(c.lastDone) })
}

// NotifyRecv is part of akita.Component; the SM has no ports (it calls
// its tensor cores and the memory hierarchy directly).
func (s *smUnit) NotifyRecv(akita.VTimeInSec, akita.Port) {}

// NotifyPortFree is part of akita.Component; see NotifyRecv.
func (s *smUnit) NotifyPortFree(akita.VTimeInSec, akita.Port) {}

// Tracing (only when a tracer is attached: the checks keep the untraced
// hot path free of string formatting).

func (c *cta) traced() bool { return c.sm.NumHooks() > 0 }

func (c *cta) taskID(kt int) string {
	if !c.traced() {
		return ""
	}
	if kt < 0 {
		return fmt.Sprintf("sim%d.%s.CTA%d", c.sm.gpu.serial, c.sm.Name(), c.idx)
	}
	return fmt.Sprintf("sim%d.%s.CTA%d.K%d", c.sm.gpu.serial, c.sm.Name(), c.idx, kt)
}

func (c *cta) traceStart(id, parent, kind, what string) {
	if c.traced() {
		tracing.StartTask(id, parent, c.sm, kind, what, nil)
	}
}

func (c *cta) traceEnd(id string) {
	if c.traced() {
		tracing.EndTask(id, c.sm)
	}
}
