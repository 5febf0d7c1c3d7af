package sm

import (
	"fmt"

	"github.com/sarchlab/akita/v3/tracing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory/smem"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore/unit"
)

// SM is one SM: an Akita component whose events wake its
// sub-partitions' warp schedulers. Its sub-partitions (each with its
// warp schedulers, tensor core, ALU pipe and register file) and its
// shared memory are its parts; warp w of a CTA goes to sub-partition
// w mod sub-partitions, as the hardware assigns warps to processing
// blocks.
type SM struct {
	*akita.ComponentBase
	env  *Env
	ID   int
	CB   clock.Callbacks
	TCs  []*unit.Unit
	SPs  []*SubPartition
	Smem *smem.SharedMemory
	// Shared-memory access patterns, from the warps' real addresses in
	// CUTLASS's swizzled layouts (see patterns).
	ldsmA, ldsmB, ldsmE, staging smem.Pattern
	shfl                         smem.Pattern // a warp shuffle: one conflict-free wavefront
	gatherLDS                    smem.Pattern // V:N:M: the index read before a B copy
	LastFinish                   uint64       // the cycle its latest CTA finished
	Finishes                     []uint64     // the cycle each of its CTAs finished
}

// New builds SM id of a GPU: its tensor cores, shared memory and
// sub-partitions.
func New(env *Env, id int) *SM {
	name := akita.BuildNameWithIndex("GPU", "SM", id)
	sm := &SM{env: env, ID: id,
		ComponentBase: akita.NewComponentBase(name),
		Smem:          smem.NewSharedMemory(env.Config.Memory.SharedMemory)}
	sm.CB = clock.Callbacks{Engine: env.Engine, Clock: env.Clock}
	sm.patterns()
	for p := 0; p < env.Config.SM.SubPartitions; p++ {
		tc := unit.MakeBuilder().
			WithEngine(env.Engine).
			WithFreq(env.Clock.Freq).
			WithConfig(env.Config.TensorCore).
			Build(akita.BuildNameWithIndex(name, "TC", p))
		sm.TCs = append(sm.TCs, tc)
	}
	for p := 0; p < env.Config.SM.SubPartitions; p++ {
		sm.SPs = append(sm.SPs, newSubPartition(sm, p))
	}
	return sm
}

// Handle runs the callbacks the SM scheduled for itself.
func (s *SM) Handle(e akita.Event) error {
	s.CB.Fire(e)
	return nil
}

// At runs fn at cycle c (now or later) as one of the SM's own events; in
// an ensemble run, at a tie offset within that cycle (see jitter.go).
func (s *SM) At(c uint64, fn func()) {
	s.CB.AtOffset(s, c, s.env.Tie.Tie(), fn)
}

// Start starts CTA idx on this SM now (the dispatcher's launch event).
func (s *SM) Start(now uint64, idx int) {
	c := newCTA(s, idx)
	c.launch(now)
	for _, h := range s.env.Hooks {
		h.CTAStarted(c)
	}
}

// patterns sets the shared-memory patterns of the SM's accesses from
// their addresses in CUTLASS's sm80 layouts (see kernel.Plan.smemPatterns):
// per LDSM.x4 of A, of B and of the metadata, the wavefronts of the warp's
// whole k-step fragment of that operand spread over its 512-byte LDSM.x4
// (or, for a TF32 operand along M or N, 128-byte LDS.32) instructions
// (rounded up); the epilogue's STS.128/LDS.128 into its
// padded, conflict-free staging tile (4 wavefronts per 512 B).
func (s *SM) patterns() {
	p := s.env.Plan
	s.ldsmA = perInstr("ldsm.x4 A", p.LDSMA, p.FragInstrBytes(isa.OperandA))
	s.ldsmB = perInstr("ldsm.x4 B", p.LDSMB, p.FragInstrBytes(isa.OperandB))
	s.ldsmE = perInstr("ldsm E", p.MetaLDSM, kernel.ChunkBytes)
	s.gatherLDS = p.GatherLDS
	s.staging = smem.Pattern{Name: "epilogue sts/lds.128",
		BytesPerInstr: kernel.ChunkBytes, Wavefronts: kernel.ChunkBytes / 128}
	s.shfl = smem.Pattern{Name: "shfl.bfly", BytesPerInstr: regBytes, Wavefronts: 1}
}

// LoadPattern is the pattern of shared-memory load in (an LDSM or LDS):
// its operand's fragment pattern, the epilogue's staging for D, the V:N:M
// index read for an LDS of the metadata.
func (s *SM) LoadPattern(in *isa.Instr) smem.Pattern {
	switch {
	case in.Op == isa.OpLDS && in.Operand == isa.OperandD:
		return s.staging
	case in.Op == isa.OpLDS && in.Operand == isa.OperandE:
		return s.gatherLDS
	}
	return s.ldsmPattern(in.Operand)
}

// ldsmPattern is the pattern of an LDSM of operand op.
func (s *SM) ldsmPattern(op isa.Operand) smem.Pattern {
	switch op {
	case isa.OperandE:
		return s.ldsmE
	case isa.OperandB:
		return s.ldsmB
	}
	return s.ldsmA
}

// StagingPattern is the pattern of the epilogue's STS and LDS of D.
func (s *SM) StagingPattern() smem.Pattern { return s.staging }

// perInstr spreads a fragment pattern over instructions of instr bytes
// (512 for an LDSM.x4, 128 for an LDS.32).
func perInstr(name string, f smem.Pattern, instr int) smem.Pattern {
	if f.BytesPerInstr <= 0 {
		return smem.Pattern{Name: name, BytesPerInstr: instr, Wavefronts: instr / 128}
	}
	return smem.Pattern{Name: name, BytesPerInstr: instr,
		Wavefronts: max(1, kernel.CeilDiv(f.Wavefronts*instr, f.BytesPerInstr))}
}

// CTA is one threadblock in flight: its warps, its barrier and the
// global tiles its copies read.
type CTA struct {
	kernel.CTA
	SM *SM

	Warps    []*Warp
	arrived  int    // warps waiting at the current barrier
	exited   int    // warps that ran EXIT
	stores   int    // STG writes not yet accepted by L2
	lastDone uint64 // last STG accepted
	// stored is storeDone as a func value, made once per CTA rather
	// than once per STG.
	stored func(uint64)
	fix    fixup // the running segment's flag wait (fixup.go)
}

func newCTA(s *SM, idx int) *CTA {
	c := &CTA{CTA: kernel.NewCTA(s.env.Plan, idx), SM: s}
	c.stored = c.storeDone
	return c
}

// launch makes the CTA's warps and hands them to their sub-partitions.
func (c *CTA) launch(now uint64) {
	c.traceStart(c.taskID(), "", "cta", fmt.Sprintf("CTA %d (%d,%d) split %d",
		c.Index, c.TileM, c.TileN, c.Split))
	nsp := len(c.SM.SPs)
	for w := 0; w < c.Plan.Warps; w++ {
		wp := c.SM.newWarp(c, w, c.CTA.Program(w), now)
		c.Warps = append(c.Warps, wp)
		c.SM.SPs[w%nsp].add(wp, now)
	}
}

// barrier records warp w at the CTA's barrier at cycle now; when the last
// warp arrives, all resume barrier_latency cycles later.
func (c *CTA) barrier(now uint64) {
	c.arrived++
	if c.arrived < len(c.Warps)-c.exited {
		return
	}
	c.arrived = 0
	release := now + uint64(c.SM.env.Config.SM.BarrierLatency)
	if len(c.SM.env.Hooks) > 0 && c.Warps[0].section == 1 { // a k-step's barrier
		for _, h := range c.SM.env.Hooks {
			h.KStepBarrier(c, c.Warps[0].iter, release)
		}
	}
	for _, w := range c.Warps {
		if w.atBarrier {
			w.atBarrier = false
			w.earliest = max(w.earliest, release)
			w.released = w.earliest
			w.SP.wake(release)
		}
	}
}

// warpExited counts a warp's EXIT; the CTA's slot frees once every warp
// has exited and its stores have been accepted.
func (c *CTA) warpExited(now uint64) {
	c.exited++
	c.lastDone = max(c.lastDone, now)
	c.maybeFinish()
}

func (c *CTA) storeDone(at uint64) {
	c.stores--
	c.lastDone = max(c.lastDone, at)
	if c.stores == 0 && c.fix.fenced != nil {
		w := c.fix.fenced
		c.fix.fenced = nil
		w.SP.wake(at)
	}
	c.maybeFinish()
}

func (c *CTA) maybeFinish() {
	if c.exited < len(c.Warps) || c.stores > 0 {
		return
	}
	c.traceEnd(c.taskID())
	c.Warps = nil
	c.exited = -1 // finished once
	c.SM.env.Finished(c, c.lastDone)
}

// SchedulesByAge says whether the SM's scheduling policy favours older
// warps (and so the CTAs launched earlier among those it holds).
func (s *SM) SchedulesByAge() bool { return s.SPs[0].sched.byAge() }

// SkipKSteps moves the CTA's warps, standing at a k-step barrier, on by j
// k-steps: the k-steps between are left out (the fast-forward's one
// control of the SM).
func (c *CTA) SkipKSteps(j int) {
	for _, w := range c.Warps {
		w.iter += j
	}
}

// NotifyRecv is part of akita.Component; the SM has no ports (it calls
// its tensor cores and the memory hierarchy directly).
func (s *SM) NotifyRecv(akita.VTimeInSec, akita.Port) {}

// NotifyPortFree is part of akita.Component; see NotifyRecv.
func (s *SM) NotifyPortFree(akita.VTimeInSec, akita.Port) {}

// Tracing (only when a tracer is attached: the checks keep the untraced
// hot path free of string formatting).

func (c *CTA) traced() bool { return c.SM.NumHooks() > 0 }

func (c *CTA) taskID() string {
	if !c.traced() {
		return ""
	}
	return fmt.Sprintf("sim%d.%s.CTA%d", c.SM.env.Serial, c.SM.Name(), c.Index)
}

func (c *CTA) traceStart(id, parent, kind, what string) {
	if c.traced() {
		tracing.StartTask(id, parent, c.SM, kind, what, nil)
	}
}

func (c *CTA) traceEnd(id string) {
	if c.traced() {
		tracing.EndTask(id, c.SM)
	}
}
