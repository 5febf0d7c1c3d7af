package sim

import (
	"fmt"

	"github.com/sarchlab/akita/v3/tracing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// smUnit is one SM: an Akita component whose events wake its
// sub-partitions' warp schedulers. Its sub-partitions (each with its
// warp schedulers, tensor core, ALU pipe and register file) and its
// shared memory are its parts; warp w of a CTA goes to sub-partition
// w mod sub-partitions, as the hardware assigns warps to processing
// blocks.
type smUnit struct {
	*akita.ComponentBase
	env  *smEnv
	id   int
	cb   clock.Callbacks
	tcs  []*tensorcore.Unit
	sps  []*subPartition
	smem *memory.SharedMemory
	// Shared-memory access patterns, from the warps' real addresses in
	// CUTLASS's swizzled layouts (see patterns).
	ldsmA, ldsmB, ldsmE, staging memory.Pattern
	lastFinish                   uint64   // the cycle its latest CTA finished
	finishes                     []uint64 // the cycle each of its CTAs finished
}

// newSMUnit builds SM id of a GPU: its tensor cores, shared memory and
// sub-partitions.
func newSMUnit(env *smEnv, id int) *smUnit {
	name := akita.BuildNameWithIndex("GPU", "SM", id)
	sm := &smUnit{env: env, id: id,
		ComponentBase: akita.NewComponentBase(name),
		smem:          memory.NewSharedMemory(env.cfg.Memory.SharedMemory)}
	sm.cb = clock.Callbacks{Engine: env.engine, Clock: env.clk}
	sm.patterns()
	for p := 0; p < env.cfg.SM.SubPartitions; p++ {
		tc := tensorcore.MakeBuilder().
			WithEngine(env.engine).
			WithFreq(env.clk.Freq).
			WithConfig(env.cfg.TensorCore).
			Build(akita.BuildNameWithIndex(name, "TC", p))
		sm.tcs = append(sm.tcs, tc)
	}
	for p := 0; p < env.cfg.SM.SubPartitions; p++ {
		sm.sps = append(sm.sps, newSubPartition(sm, p))
	}
	return sm
}

// Handle runs the callbacks the SM scheduled for itself.
func (s *smUnit) Handle(e akita.Event) error {
	s.cb.Fire(e)
	return nil
}

// at runs fn at cycle c (now or later) as one of the SM's own events; in
// an ensemble run, at a tie offset within that cycle (see jitter.go).
func (s *smUnit) at(c uint64, fn func()) {
	s.cb.AtOffset(s, c, s.env.tie.Tie(), fn)
}

// start starts CTA idx on this SM now (the dispatcher's launch event).
func (s *smUnit) start(now uint64, idx int) {
	c := newCTA(s, idx)
	c.launch(now)
	for _, h := range s.env.hooks {
		h.CTAStarted(c)
	}
}

// patterns sets the shared-memory patterns of the SM's accesses from
// their addresses in CUTLASS's sm80 layouts (see kernelPlan.smemPatterns):
// per LDSM.x4 of A, of B and of the metadata, the wavefronts of the warp's
// whole k-step fragment of that operand spread over its 512-byte
// instructions (rounded up); the epilogue's STS.128/LDS.128 into its
// padded, conflict-free staging tile (4 wavefronts per 512 B).
func (s *smUnit) patterns() {
	p := s.env.plan
	s.ldsmA = perInstr("ldsm.x4 A", p.LDSMA)
	s.ldsmB = perInstr("ldsm.x4 B", p.LDSMB)
	s.ldsmE = perInstr("ldsm E", p.MetaLDSM)
	s.staging = memory.Pattern{Name: "epilogue sts/lds.128",
		BytesPerInstr: kernel.ChunkBytes, Wavefronts: kernel.ChunkBytes / 128}
}

// ldsmPattern is the pattern of an LDSM of operand op.
func (s *smUnit) ldsmPattern(op isa.Operand) memory.Pattern {
	switch op {
	case isa.OperandE:
		return s.ldsmE
	case isa.OperandB:
		return s.ldsmB
	}
	return s.ldsmA
}

// perInstr spreads a fragment pattern over 512-byte instructions.
func perInstr(name string, f memory.Pattern) memory.Pattern {
	if f.BytesPerInstr <= 0 {
		return memory.Pattern{Name: name, BytesPerInstr: kernel.ChunkBytes, Wavefronts: 4}
	}
	return memory.Pattern{Name: name, BytesPerInstr: kernel.ChunkBytes,
		Wavefronts: max(1, kernel.CeilDiv(f.Wavefronts*kernel.ChunkBytes, f.BytesPerInstr))}
}

// cta is one threadblock in flight: its warps, its barrier and the
// global tiles its copies read.
type cta struct {
	kernel.CTA
	sm *smUnit

	warps    []*warp
	arrived  int    // warps waiting at the current barrier
	exited   int    // warps that ran EXIT
	stores   int    // STG writes not yet accepted by L2
	lastDone uint64 // last STG accepted
	ff       ffCTA  // the fast-forward's state (fastforward.go)
	// stored is storeDone as a func value, made once per CTA rather
	// than once per STG.
	stored func(uint64)
}

func newCTA(s *smUnit, idx int) *cta {
	c := &cta{CTA: kernel.NewCTA(s.env.plan, idx), sm: s}
	c.stored = c.storeDone
	return c
}

// launch makes the CTA's warps and hands them to their sub-partitions.
func (c *cta) launch(now uint64) {
	c.traceStart(c.taskID(), "", "cta", fmt.Sprintf("CTA %d (%d,%d) split %d",
		c.Index, c.TileM, c.TileN, c.Split))
	nsp := len(c.sm.sps)
	for w := 0; w < c.Plan.Warps; w++ {
		wp := c.sm.newWarp(c, w, c.Plan.Program(w), now)
		c.warps = append(c.warps, wp)
		c.sm.sps[w%nsp].add(wp, now)
	}
}

// barrier records warp w at the CTA's barrier at cycle now; when the last
// warp arrives, all resume barrier_latency cycles later.
func (c *cta) barrier(now uint64) {
	c.arrived++
	if c.arrived < len(c.warps)-c.exited {
		return
	}
	c.arrived = 0
	release := now + uint64(c.sm.env.cfg.SM.BarrierLatency)
	if len(c.sm.env.hooks) > 0 && c.warps[0].section == 1 { // a k-step's barrier
		for _, h := range c.sm.env.hooks {
			h.KStepBarrier(c, c.warps[0].iter, release)
		}
	}
	for _, w := range c.warps {
		if w.atBarrier {
			w.atBarrier = false
			w.earliest = max(w.earliest, release)
			w.released = w.earliest
			w.sp.wake(release)
		}
	}
}

// warpExited counts a warp's EXIT; the CTA's slot frees once every warp
// has exited and its stores have been accepted.
func (c *cta) warpExited(now uint64) {
	c.exited++
	c.lastDone = max(c.lastDone, now)
	c.maybeFinish()
}

func (c *cta) storeDone(at uint64) {
	c.stores--
	c.lastDone = max(c.lastDone, at)
	c.maybeFinish()
}

func (c *cta) maybeFinish() {
	if c.exited < len(c.warps) || c.stores > 0 {
		return
	}
	c.traceEnd(c.taskID())
	c.warps = nil
	c.exited = -1 // finished once
	c.sm.env.finished(c, c.lastDone)
}

// SkipKSteps moves the CTA's warps, standing at a k-step barrier, on by j
// k-steps: the k-steps between are left out (the fast-forward's one
// control of the SM).
func (c *cta) SkipKSteps(j int) {
	for _, w := range c.warps {
		w.iter += j
	}
}

// NotifyRecv is part of akita.Component; the SM has no ports (it calls
// its tensor cores and the memory hierarchy directly).
func (s *smUnit) NotifyRecv(akita.VTimeInSec, akita.Port) {}

// NotifyPortFree is part of akita.Component; see NotifyRecv.
func (s *smUnit) NotifyPortFree(akita.VTimeInSec, akita.Port) {}

// Tracing (only when a tracer is attached: the checks keep the untraced
// hot path free of string formatting).

func (c *cta) traced() bool { return c.sm.NumHooks() > 0 }

func (c *cta) taskID() string {
	if !c.traced() {
		return ""
	}
	return fmt.Sprintf("sim%d.%s.CTA%d", c.sm.env.serial, c.sm.Name(), c.Index)
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
