package sm

import (
	"math"

	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
)

// never is a ready time that only an event (a load arriving, a barrier
// releasing) can bring forward.
const Never = math.MaxUint64

// Pipe timings of the non-tensor instructions (per sub-partition).
const (
	// aluInterval: 16 INT32 lanes per sub-partition take a warp
	// instruction in 2 cycles (NVIDIA A100 whitepaper, SM diagram).
	aluInterval = 2
	// aluLatency: dependent-issue latency of IADD3/IMAD/LOP3 on Ampere
	// (4 cycles in the Jia et al. and Abdelkhalik et al. microbenchmarks).
	aluLatency = 4
	// fmaLatency: dependent-issue latency of FFMA/FADD on the A100 (4
	// cycles dependent, 2 independent: Abdelkhalik et al., "Demystifying
	// the Nvidia Ampere Architecture through Microbenchmarking and
	// Instruction-level Analysis", HPEC 2022, arXiv 2208.11174).
	fmaLatency = 4
	// mioQueue: shared-memory instructions a sub-partition's MIO queue
	// holds before the oldest is served (estimated; Accel-Sim's Ampere
	// configs use a comparable per-scheduler LD/ST queue).
	mioQueue = 8
)

// cpGroup is a cp.async commit group of one warp: chunks still to be
// written into shared memory, and when the last one was.
type cpGroup struct {
	w      *Warp
	left   int
	closed bool
	doneAt uint64
	// share splits what its last-written chunk waited on over smem and
	// L2 and DRAM latency and bandwidth (weights summing to 1).
	share [NumReasons]float64
	// filled is fill as a func value, made once per group rather than
	// once per LDGSTS.
	filled func(memory.FillDone)
}

func newCPGroup(w *Warp) *cpGroup {
	g := &cpGroup{w: w}
	g.filled = g.fill
	return g
}

// fill counts one of the group's chunks written into shared memory; the
// warp is woken once the closed group's last chunk is.
func (g *cpGroup) fill(d memory.FillDone) {
	g.left--
	if d.Written >= g.doneAt {
		g.doneAt = d.Written
		g.share = g.w.SP.sm.env.fillCause(d)
	}
	if g.left == 0 && g.closed {
		g.w.SP.wake(max(d.Written, d.Arrived+1))
	}
}

// Warp is one resident warp: its instruction stream, program counter,
// scoreboard and cp.async groups.
type Warp struct {
	CTA   *CTA
	SP    *SubPartition
	id    int
	sched int // warp scheduler of its sub-partition
	prog  *isa.Program

	section int // 0 prologue, 1 body, 2 epilogue, 3 exited
	pc      int
	iter    int // k-step of the body
	// ready is the scoreboard: the cycle each register's pending write
	// lands (never: a load not yet back).
	ready    []uint64
	rft      *rfTable // prog's register-file uses
	earliest uint64   // in-order issue: next instruction not before this
	groups   []*cpGroup
	open     *cpGroup
	// atBarrier: waiting at BAR.SYNC for the CTA's other warps.
	atBarrier bool
	// atWait: waiting at WAIT for the CTA's flag; seg is the CTA segment
	// the warp runs.
	atWait   bool
	seg      int
	released uint64      // the cycle the last barrier let the warp go on
	lastA    isa.RegSpan // previous MMA's A operand (register reuse cache)
	// trips are, per register an operand LDG (a GEMV's) wrote, the load's
	// trip from issue to arrival (0: not back; nil until the first).
	trips []uint64
	// operands caches when the registers of instruction operands.in are
	// ready and, once asked, what they wait on; setReady, the only writer
	// of ready, clears it.
	operands struct {
		in     *isa.Instr
		at     uint64
		why    Reason
		hasWhy bool
	}

	// stall accounting since the warp's last MMA (see account.go)
	why      Reason
	since    uint64
	stall    [NumReasons]uint64
	stageWho *cpGroup // the group a DEPBAR waits on
	epoch    uint64   // the sub-partition's epoch of stall
	mmaBegun bool     // the warp has issued an MMA (Account.Prologue)
}

func (s *SM) newWarp(c *CTA, id int, prog *isa.Program, now uint64) *Warp {
	w := &Warp{CTA: c, id: id, prog: prog, ready: make([]uint64, prog.Regs),
		rft: s.env.rfTable(prog)}
	w.earliest, w.since, w.why = now, now, WhyLaunch
	w.open = newCPGroup(w)
	return w
}

// current is the instruction at the program counter (nil: exited).
func (w *Warp) current() *isa.Instr {
	for {
		var list []isa.Instr
		switch w.section {
		case 0:
			list = w.prog.Prologue
		case 1:
			list = w.prog.Body
		case 2:
			list = w.prog.Epilogue
		default:
			w.SP.exited = true
			return nil
		}
		if w.pc < len(list) {
			return &list[w.pc]
		}
		w.pc = 0
		if w.section == 1 {
			warpStepsSimulated.Add(1)
		}
		switch {
		case w.section == 1 && w.iter+1 < w.CTA.Steps:
			w.iter++
		default:
			w.section++
		}
	}
}

func (w *Warp) regsReady(r isa.RegSpan) uint64 {
	at := uint64(0)
	if r.N == 0 {
		return 0
	}
	for _, t := range w.ready[r.First : int(r.First)+int(r.N)] {
		at = max(at, t)
	}
	return at
}

func (w *Warp) setReady(r isa.RegSpan, at uint64) {
	regs := w.ready[r.First : int(r.First)+int(r.N)]
	for i := range regs {
		regs[i] = at
	}
	w.operands.in = nil
}

// operandsReady is when all of in's source and destination registers are
// ready.
func (w *Warp) operandsReady(in *isa.Instr) uint64 {
	if w.operands.in == in {
		return w.operands.at
	}
	at := w.regsReady(in.Dst)
	for _, s := range in.Src {
		if s != in.Dst { // an MMA's C is its D
			at = max(at, w.regsReady(s))
		}
	}
	w.operands.in, w.operands.at, w.operands.hasWhy = in, at, false
	return at
}

// operandsWhy is what in's wait for its registers is (operandsReady
// first).
func (w *Warp) operandsWhy(in *isa.Instr) Reason {
	if !w.operands.hasWhy {
		w.operands.why, w.operands.hasWhy = w.regWhy(in), true
	}
	return w.operands.why
}

// readyAt is the earliest cycle the warp's next instruction can issue
// (never: it waits on an event) and what holds it.
func (w *Warp) readyAt(in *isa.Instr, now uint64) (uint64, Reason) {
	if w.atBarrier {
		return Never, WhyBarrier
	}
	if w.atWait {
		return Never, WhyFixup
	}
	if in.Op == isa.OpSIGNAL && w.CTA.stores > 0 {
		w.CTA.fix.fenced = w // woken by the last store's acceptance
		return Never, WhyFixup
	}
	at, why := w.earliest, WhyIssue
	if at == w.released {
		why = WhyBarrier // the barrier's latency after the last arrival
	}
	if in.Op == isa.OpDEPBAR {
		t, wy := w.depbarReady(int(in.N))
		if t > at {
			at, why = t, wy
		}
		return at, why
	}
	if t := w.operandsReady(in); t > at {
		at, why = t, w.operandsWhy(in)
	}
	if t, wy := w.SP.pipeFree(w, in); t > at {
		at, why = t, wy
	}
	return at, why
}

// regWhy names a register dependence: an MMA waiting on a fragment waits
// on shared memory, on its accumulator on the tensor core's latency;
// anything else is a dependence.
func (w *Warp) regWhy(in *isa.Instr) Reason {
	if in.Op == isa.OpMMA || in.Op == isa.OpMMASP {
		if w.regsReady(in.Dst) >= max(w.regsReady(in.Src[0]), w.regsReady(in.Src[1]),
			w.regsReady(in.Src[3])) {
			return WhyDependence
		}
		return WhySmem
	}
	if w.loadOf(in) >= 0 {
		return WhyStage // an operand load: resolved by its trip at issue (loadResolved)
	}
	return WhyDependence
}

// depbarReady is when at most n of the warp's closed groups are still
// being written (never while one of the older ones is not back).
func (w *Warp) depbarReady(n int) (uint64, Reason) {
	closed := len(w.groups)
	at, why := uint64(0), WhyIssue
	w.stageWho = nil
	for i := 0; i < closed-n; i++ {
		g := w.groups[i]
		if g.left > 0 {
			w.stageWho = g
			return Never, WhyStage
		}
		if g.doneAt > at {
			at, why = g.doneAt, WhyStage
			w.stageWho = g
		}
	}
	return at, why
}

// issue executes the warp's next instruction at cycle now.
func (w *Warp) issue(in *isa.Instr, now uint64) {
	sp := w.SP
	w.earliest = now + 1
	n := sp.sm.env.Count
	n.Issued++
	n.IssuedOp[in.Op]++
	switch in.Op {
	case isa.OpMMA, isa.OpMMASP:
		w.issueMMA(in, now)
	case isa.OpLDSM, isa.OpLDS:
		done := sp.smemAccess(now, sp.sm.LoadPattern(in), int(in.Bytes))
		sp.take(now, w.rfUse(in))
		w.setReady(in.Dst, done)
	case isa.OpSTS:
		sp.smemAccess(now, sp.sm.staging, int(in.Bytes))
		sp.take(now, w.rfUse(in))
	case isa.OpLDGSTS:
		w.copy(in, now)
	case isa.OpLDGDEPBAR:
		w.open.closed = true
		w.groups = append(w.groups, w.open)
		w.open = newCPGroup(w)
	case isa.OpDEPBAR:
		w.retireGroups(int(in.N))
	case isa.OpBAR:
		w.atBarrier = true
		w.CTA.barrier(now)
	case isa.OpALU:
		sp.aluFree = now + aluInterval
		sp.take(now, w.rfUse(in))
		n.RFWrite += uint64(int(in.Dst.N) * regBytes)
		w.setReady(in.Dst, now+aluLatency)
	case isa.OpFMA:
		sp.fmaFree = now + sp.fmaInterval
		sp.take(now, w.rfUse(in))
		n.RFWrite += uint64(int(in.Dst.N) * regBytes)
		w.setReady(in.Dst, now+fmaLatency)
		if w.CTA.Plan.Schedule == kernel.GEMV {
			sp.mmaIssued(w, now) // the GEMV's account is its FP32 pipe's
		}
	case isa.OpSHFL:
		done := sp.smemAccess(now, sp.sm.shfl, regBytes)
		sp.take(now, w.rfUse(in))
		w.setReady(in.Dst, done)
	case isa.OpLDG:
		w.load(in, now)
	case isa.OpSTG:
		w.store(in, now)
	case isa.OpWAIT:
		w.wait(now)
	case isa.OpSIGNAL:
		w.CTA.signal(now)
	case isa.OpNEXT:
		w.next(now)
		return
	case isa.OpEXIT:
		w.section = 3
		sp.exited = true
		w.CTA.warpExited(now)
		return
	}
	w.pc++
}

func (w *Warp) issueMMA(in *isa.Instr, now uint64) {
	sp := w.SP
	sp.take(now, w.rfUse(in))
	w.lastA = in.Src[0]
	w.setReady(in.Dst, sp.issueMMA(now))
	sp.sm.env.Count.RFWrite += uint64(int(in.Dst.N) * regBytes) // D, at write-back
	sp.mmaIssued(w, now)
}

// copy issues one LDGSTS: the chunk's global read, whose arrival is
// written into shared memory and counted against the open group.
func (w *Warp) copy(in *isa.Instr, now uint64) {
	k := int(in.Stage)
	if in.Stage < 0 {
		k = w.iter + w.CTA.Plan.Tile.Stages - 1
	}
	class, r := w.CTA.ChunkRegion(k, in.Operand, int(in.Chunk))
	w.SP.take(now, w.rfUse(in))
	if r.Rows == 0 {
		return // predicated off: zero-fill, no traffic
	}
	w.open.left++
	sm := w.SP.sm
	f := sm.env.Filler
	plan := f.PlanOf(class, r, w.CTA.Plan.SmemLayout(class))
	f.CpAsync(sm.env.Mem, sm.Smem, now, sm.ID, class, r, plan, w.open.filled)
}

// retireGroups drops the groups a passed DEPBAR.LE n waited for and
// books the wait to what the last of them waited on.
func (w *Warp) retireGroups(n int) {
	done := len(w.groups) - n
	if done <= 0 {
		return
	}
	w.groups = append(w.groups[:0], w.groups[done:]...)
}

// load issues an LDG of the epilogue's source through L1: C, D as the
// previous serial split left it, or stream-K partial sums (those two
// counted as fix-up bytes).
func (w *Warp) load(in *isa.Instr, now uint64) {
	if in.Space == isa.SpaceOperand {
		w.loadOperand(in, now)
		return
	}
	c := w.CTA
	r := w.region(in)
	w.setReady(in.Dst, Never)
	if r.Rows == 0 {
		w.setReady(in.Dst, now+1)
		return
	}
	if in.Space != isa.SpaceC {
		c.SM.env.Count.FixupBytes += uint64(r.Bytes())
	}
	dst := in.Dst
	c.SM.env.Mem.Read(now, c.SM.ID, memory.CRead, r, true, func(at uint64) {
		w.setReady(dst, at)
		w.SP.wake(at + 1)
	})
}

// loadOperand issues a CUDA-core GEMV's LDG.128 of an operand chunk of
// the running k-step through L1 into registers, booked to the operand's
// class; a chunk past K or the matrix is predicated off.
func (w *Warp) loadOperand(in *isa.Instr, now uint64) {
	c := w.CTA
	class, r := c.ChunkRegion(w.iter, in.Operand, int(in.Chunk))
	if r.Rows == 0 {
		w.setReady(in.Dst, now+1)
		return
	}
	w.setReady(in.Dst, Never)
	dst := in.Dst
	w.markLoad(dst, 0)
	c.SM.env.Mem.Read(now, c.SM.ID, class, r, true, func(at uint64) {
		w.setReady(dst, at)
		w.markLoad(dst, max(1, at-now))
		w.SP.wake(at + 1)
	})
}

// markLoad notes that an operand LDG writes r, its trip from issue to
// arrival (0: not back yet), for the account (loadResolved).
func (w *Warp) markLoad(r isa.RegSpan, trip uint64) {
	if w.trips == nil {
		w.trips = make([]uint64, len(w.ready))
	}
	for i := range r.N {
		w.trips[int(r.First)+int(i)] = trip
	}
}

// store issues an STG of the epilogue's D (or split-K partials, or
// stream-K partial sums: fix-up bytes, as is a serial split's D that a
// later split reads back) to L2.
func (w *Warp) store(in *isa.Instr, now uint64) {
	c := w.CTA
	r := w.region(in)
	w.SP.take(now, w.rfUse(in))
	if r.Rows == 0 {
		return
	}
	if in.Space == isa.SpacePartials || (in.Space == isa.SpaceD && c.Epi().Signal == kernel.SignalSet && c.Epi().Value != 0) {
		c.SM.env.Count.FixupBytes += uint64(r.Bytes())
	}
	c.stores++
	c.SM.env.Mem.Write(now, c.SM.ID, memory.DWrite, r, c.stored)
}

// region is the global region an LDG or STG chunk of the warp covers.
func (w *Warp) region(in *isa.Instr) memory.Region {
	c := w.CTA
	switch in.Space {
	case isa.SpaceC:
		return c.EpilogueRegion(w.id, int(in.Chunk), kernel.BaseC)
	case isa.SpaceSplitK:
		return c.EpilogueRegion(w.id, int(in.Chunk), kernel.BaseSplit)
	case isa.SpacePartials:
		return c.PartialRegion(w.id, int(in.Chunk))
	case isa.SpaceTile:
		return c.OutputTile()
	}
	return c.EpilogueRegion(w.id, int(in.Chunk), kernel.BaseD)
}
