package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/memory"
)

// The k-step SM (sm.fidelity: kstep): each warp makes one shared-memory
// reservation and two batched tensor-core runs per k-step, and the CTA's
// k-steps advance as a state machine. It is the fast path beside the
// instruction-level SM (sm.go, subpartition.go, warp.go); see docs/sm.md
// for how far the two agree.

// fillCycles is how long writing a fill of bytes into shared memory takes
// on an idle datapath, latency included.
func (s *smUnit) fillCycles(bytes int) uint64 {
	cfg := s.gpu.cfg.Memory.SharedMemory
	rate := min(cfg.FillBytesPerClk, cfg.BytesPerClk)
	return uint64((bytes+rate-1)/rate + cfg.Latency)
}

// epilogueStaging is the epilogue's trip through shared memory: the warps
// store accumulator fragments (16 B per thread, swizzled, conflict-free)
// and read them back as row-major vectors for coalesced global stores.
var epilogueStaging = memory.Pattern{Name: "epilogue sts.128/lds.128",
	BytesPerInstr: 512, Wavefronts: 4}

// cta is one threadblock in flight: its cp.async stages, its warps and the
// barrier that ends each k-step.
type kcta struct {
	*cta

	stageParts  []int    // loads outstanding per k-step's stage
	stageIssue  []uint64 // cycle the stage's loads were issued
	stageLanded []uint64 // cycle the stage could be in shared memory had the fill not queued
	stageReady  []uint64 // cycle the stage landed in shared memory (0: not yet)
	stageWhy    []reason

	kt        int    // k-step being computed or next to compute
	busy      bool   // a k-step is in progress
	arrived   int    // warps at the k-step's barrier
	barrier   uint64 // cycle the last warp reached the barrier
	barrierBy reason // what delayed the last warp
	lastDone  uint64 // last MMA result of the CTA
	results   int    // warps whose last MMA results are written back
}

func newKCTA(s *smUnit, idx int) *kcta {
	p := s.gpu.plan
	c := &kcta{cta: newCTA(s, idx)}
	// One slot per cp.async stage buffer, reused as the k-steps go by:
	// k-steps kt..kt+stages-1 are the only ones in flight, so memory does
	// not grow with K.
	slots := min(c.steps, p.tile.Stages)
	c.stageParts = make([]int, slots)
	c.stageIssue = make([]uint64, slots)
	c.stageReady = make([]uint64, slots)
	c.stageLanded = make([]uint64, slots)
	c.stageWhy = make([]reason, slots)
	return c
}

// slot is the stage buffer of k-step k.
func (c *kcta) slot(k int) int { return k % len(c.stageParts) }

// launch issues the multistage prologue: the first stages-1 k-steps'
// tiles, then waits for the first one.
func (c *kcta) launch(now uint64) {
	c.traceStart(c.ktaskID(-1), "", "cta", fmt.Sprintf("CTA %d (%d,%d) split %d",
		c.idx, c.tm, c.tn, c.split))
	for k := 0; k < min(c.plan.tile.Stages-1, c.steps); k++ {
		c.loadStage(now, k)
	}
	c.barrier = now
	c.barrierBy = whyLatency
}

// loadStage issues the cp.async copies of k-step k's A values, A metadata
// and B tiles.
func (c *kcta) loadStage(now uint64, k int) {
	i := c.slot(k)
	c.stageIssue[i] = now
	c.stageReady[i] = 0
	regions := c.stageRegions(k)
	for _, r := range regions {
		if r.region.Rows == 0 || r.region.RowBytes == 0 {
			continue
		}
		c.stageParts[i]++
	}
	for _, r := range regions {
		if r.region.Rows == 0 || r.region.RowBytes == 0 {
			continue
		}
		c.sm.gpu.mem.Read(now, c.sm.id, r.class, r.region, false,
			func(at uint64) { c.partLanded(k, at) })
	}
}

// partLanded notes one load of stage k arriving at the SM; when all have,
// the cp.async stores into shared memory finish the stage.
func (c *kcta) partLanded(k int, at uint64) {
	i := c.slot(k)
	c.stageParts[i]--
	if c.stageParts[i] > 0 {
		return
	}
	p := c.plan
	bytes := p.aStageB + p.metaStageB + p.bStageB
	ready := c.sm.smem.Access(at, c.sm.fill, bytes)
	c.stageReady[i] = max(ready, 1)
	c.stageLanded[i] = at + c.sm.fillCycles(bytes)
	c.stageWhy[i] = c.sm.gpu.memoryReason(c.stageIssue[i], at)
	c.tryStart()
}

// tryStart begins the next k-step once its stage has landed and every warp
// has passed the previous barrier.
func (c *kcta) tryStart() {
	if c.busy || c.kt >= c.steps {
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
func (c *kcta) compute(now uint64, why reason) {
	p := c.plan
	if next := c.kt + p.tile.Stages - 1; next < c.steps {
		c.loadStage(now, next)
	}
	c.arrived = 0
	c.barrier = 0
	c.traceStart(c.ktaskID(c.kt), c.ktaskID(-1), "kstep", fmt.Sprintf("k-step %d", c.kt))
	for w := 0; w < p.warps; w++ {
		c.warpStep(now, w, why)
	}
}

// warpStep is one warp's k-step: ldmatrix of its A and B fragments (and
// metadata words for sparse), overlapped with its MMAs, which start when
// the first k-group's fragments are in registers.
func (c *kcta) warpStep(now uint64, w int, why reason) {
	p := c.plan
	s := c.sm
	fragDone := s.smem.Access(now, memory.LdMatrix, p.fragBytes)
	if p.metaFragB > 0 {
		fragDone = max(fragDone, s.smem.Access(now, memory.LDS32, p.metaFragB))
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
func (c *kcta) firstFragment(now, fragDone uint64) uint64 {
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
func (c *kcta) issueMMAs(now uint64, w, sp int, fragDone uint64, why reason) {
	p := c.plan
	tc := c.sm.tcs[sp]
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
	last := c.kt == c.steps-1
	head := (p.groups - 1) * p.mmaPerGrp
	if head == 0 {
		c.warpArrived(max(now, fragDone), why)
	} else {
		acc := account(head, why)
		r := p.mmaRequest(head)
		r.Issued = func(at uint64) {
			acc(at)
			arrive := max(at+1, fragDone)
			c.warpArrived(arrive, whySmemIf(fragDone > at+1, why))
		}
		tc.Submit(now, r)
	}
	r := p.mmaRequest(p.mmaPerGrp)
	r.Issued = account(p.mmaPerGrp, why)
	r.Done = func(at uint64) {
		if last {
			c.mmaDone(at)
		}
	}
	tc.Submit(now, r)
}

func whySmemIf(cond bool, otherwise reason) reason {
	if cond {
		return whySmem
	}
	return otherwise
}

// warpArrived records a warp at the k-step's barrier.
func (c *kcta) warpArrived(at uint64, why reason) {
	if at >= c.barrier {
		c.barrier, c.barrierBy = at, why
	}
	c.arrived++
	if c.arrived < c.plan.warps {
		return
	}
	c.busy = false
	c.traceEnd(c.ktaskID(c.kt))
	c.kt++
	if c.kt < c.steps {
		c.tryStart()
	}
}

// mmaDone counts the last k-step's MMA results; when every warp's are
// written back, the epilogue runs.
func (c *kcta) mmaDone(at uint64) {
	c.lastDone = max(c.lastDone, at)
	c.results++
	if c.results < c.plan.warps {
		return
	}
	c.sm.at(c.lastDone, func() { c.epilogue(c.lastDone) })
}

// epilogue reads C when beta is not 0, stages the accumulators through
// shared memory into row-major tiles, and stores D (or the split-K
// partials). The CTA's slot frees when its stores have left.
func (c *kcta) epilogue(now uint64) {
	g := c.sm.gpu
	if g.cfg.Kernel.Beta != 0 && c.plan.splitK == 1 {
		r := c.outputRegion(baseC, c.plan.outBytes)
		g.mem.Read(now, c.sm.id, memory.CRead, r, true, c.store)
		return
	}
	c.store(now)
}

func (c *kcta) store(now uint64) {
	p := c.plan
	g := c.sm.gpu
	r := c.outputRegion(baseD, p.outBytes)
	if p.splitK > 1 {
		r = c.outputRegion(baseSplit, accumulatorBytes)
	}
	staged := c.sm.smem.Access(now, epilogueStaging, 2*r.Rows*r.RowBytes)
	c.sm.at(staged, func() {
		g.mem.Write(staged, c.sm.id, memory.DWrite, r, func(at uint64) {
			c.traceEnd(c.ktaskID(-1))
			g.ctaFinished(c.cta, at)
		})
	})
}

func (c *kcta) ktaskID(kt int) string {
	if !c.traced() {
		return ""
	}
	if kt < 0 {
		return fmt.Sprintf("sim%d.%s.CTA%d", c.sm.gpu.serial, c.sm.Name(), c.idx)
	}
	return fmt.Sprintf("sim%d.%s.CTA%d.K%d", c.sm.gpu.serial, c.sm.Name(), c.idx, kt)
}
