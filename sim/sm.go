package sim

import (
	"fmt"

	"github.com/sarchlab/akita/v3/tracing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
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
	gpu  *gpu
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
	// smemNeed is the bank-array wavefronts the CTAs started here cannot
	// finish without (kept only while a pruner watches the run: prune.go).
	smemNeed uint64
}

// Handle runs the callbacks the SM scheduled for itself.
func (s *smUnit) Handle(e akita.Event) error {
	s.cb.Fire(e)
	return nil
}

// at runs fn at cycle c (now or later) as one of the SM's own events; in
// an ensemble run, at a tie offset within that cycle (see jitter.go).
func (s *smUnit) at(c uint64, fn func()) {
	s.cb.AtOffset(s, c, s.gpu.jitter.tie(), fn)
}

// start starts CTA idx on this SM now (the dispatcher's launch event).
func (s *smUnit) start(now uint64, idx int) {
	if p := s.gpu.prune; p != nil {
		s.smemNeed += p.smemNeed[idx]
	}
	c := newCTA(s, idx)
	c.launch(now)
	if f := s.gpu.ff; f != nil {
		f.started(c)
	}
}

// patterns sets the shared-memory patterns of the SM's accesses from
// their addresses in CUTLASS's sm80 layouts (see kernelPlan.smemPatterns):
// per LDSM.x4 of A, of B and of the metadata, the wavefronts of the warp's
// whole k-step fragment of that operand spread over its 512-byte
// instructions (rounded up); the epilogue's STS.128/LDS.128 into its
// padded, conflict-free staging tile (4 wavefronts per 512 B).
func (s *smUnit) patterns() {
	p := s.gpu.plan
	s.ldsmA = perInstr("ldsm.x4 A", p.ldsmA)
	s.ldsmB = perInstr("ldsm.x4 B", p.ldsmB)
	s.ldsmE = perInstr("ldsm E", p.metaLdsm)
	s.staging = memory.Pattern{Name: "epilogue sts/lds.128",
		BytesPerInstr: chunkBytes, Wavefronts: chunkBytes / 128}
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
		return memory.Pattern{Name: name, BytesPerInstr: chunkBytes, Wavefronts: 4}
	}
	return memory.Pattern{Name: name, BytesPerInstr: chunkBytes,
		Wavefronts: max(1, ceilDiv(f.Wavefronts*chunkBytes, f.BytesPerInstr))}
}

// cta is one threadblock in flight: its warps, its barrier and the
// global tiles its copies read.
type cta struct {
	sm    *smUnit
	plan  *kernelPlan
	idx   int
	batch int
	tm    int
	tn    int
	split int
	steps int // k-steps of this CTA's split (the last split takes the remainder)

	warps    []*warp
	arrived  int    // warps waiting at the current barrier
	exited   int    // warps that ran EXIT
	stores   int    // STG writes not yet accepted by L2
	lastDone uint64 // last STG accepted
	regions  []stageTiles
	ff       ffCTA // the fast-forward's state (fastforward.go)
	// stored is storeDone as a func value, made once per CTA rather
	// than once per STG.
	stored func(uint64)
}

// stageTiles caches the global tiles of one k-step.
type stageTiles struct {
	k    int
	list []classRegion
}

func newCTA(s *smUnit, idx int) *cta {
	c := planCTA(s.gpu.plan, idx)
	c.sm = s
	c.stored = c.storeDone
	return c
}

// planCTA is CTA idx of plan p before it has an SM: its coordinates and
// the global tiles its copies read.
func planCTA(p *kernelPlan, idx int) *cta {
	c := &cta{plan: p, idx: idx}
	c.batch, c.tm, c.tn, c.split = p.ctaCoord(idx)
	c.steps = p.stepsOf(c.split)
	c.regions = make([]stageTiles, p.tile.Stages+1)
	for i := range c.regions {
		c.regions[i].k = -1
	}
	return c
}

// launch makes the CTA's warps and hands them to their sub-partitions.
func (c *cta) launch(now uint64) {
	c.traceStart(c.taskID(), "", "cta", fmt.Sprintf("CTA %d (%d,%d) split %d",
		c.idx, c.tm, c.tn, c.split))
	nsp := len(c.sm.sps)
	for w := 0; w < c.plan.warps; w++ {
		wp := c.sm.newWarp(c, w, c.plan.program(w), now)
		c.warps = append(c.warps, wp)
		c.sm.sps[w%nsp].add(wp, now)
	}
}

// tiles are the global tiles of k-step k (cached per stage slot).
func (c *cta) tiles(k int) []classRegion {
	slot := &c.regions[k%len(c.regions)]
	if slot.k != k {
		slot.k, slot.list = k, c.stageRegions(k)
	}
	return slot.list
}

// chunkRegion is the part of k-step k's tile of op that one warp's
// LDGSTS chunk copies (Rows 0: the chunk lies outside the matrix and the
// copy is predicated off, as CUTLASS's zero-fill copies are).
func (c *cta) chunkRegion(k int, op isa.Operand, chunk int) (memory.Class, memory.Region) {
	class := memory.BOperand
	switch op {
	case isa.OperandA:
		class = memory.AValues
	case isa.OperandE:
		class = memory.AMeta
	}
	if k >= c.steps {
		return class, memory.Region{}
	}
	if op == isa.OperandE {
		return class, c.metaChunk(k, chunk)
	}
	for _, r := range c.tiles(k) {
		if r.class == class {
			return class, chunkOf(r.region, c.fullRowBytes(op), chunk)
		}
	}
	return class, memory.Region{}
}

// metaChunk is chunk j of k-step k's metadata: the stage's metadata
// blocks (A's, then B's in dual-side mode) laid end to end in shared
// memory, 512 bytes to a chunk.
func (c *cta) metaChunk(k, chunk int) memory.Region {
	p := c.plan
	keptK := p.tile.BK * p.pattern.N / p.pattern.M
	blocks := []int{p.metaBytes(p.tile.BM, keptK), p.metaBytes(p.tile.BN, keptK)}
	off, i := chunk*chunkBytes, 0
	for _, r := range c.tiles(k) {
		if r.class != memory.AMeta {
			continue
		}
		block := blocks[min(i, 1)]
		i++
		if off >= block {
			off -= block
			continue
		}
		if off >= r.region.RowBytes {
			return memory.Region{}
		}
		return memory.Region{Base: r.region.Base + uint64(off), Rows: 1,
			RowBytes: min(chunkBytes, r.region.RowBytes-off), Pitch: r.region.Pitch}
	}
	return memory.Region{}
}

// fullRowBytes is the row length of op's stage tile before clipping at
// the matrix edge: the row pitch of the tile in shared memory.
func (c *cta) fullRowBytes(op isa.Operand) int {
	p := c.plan
	switch op {
	case isa.OperandA:
		return p.tile.BK * p.pattern.N / p.pattern.M * p.elemBytes
	case isa.OperandB:
		return p.tile.BK * p.elemBytes
	}
	return p.metaStageB
}

// chunkOf cuts the 512-byte chunk of a tile whose rows are rowBytes long
// in shared memory out of its (possibly clipped) global region.
func chunkOf(r memory.Region, rowBytes, chunk int) memory.Region {
	if r.Rows == 0 || r.RowBytes == 0 {
		return memory.Region{}
	}
	if rowBytes >= chunkBytes {
		perRow := rowBytes / chunkBytes
		row, col := chunk/perRow, (chunk%perRow)*chunkBytes
		if row >= r.Rows || col >= r.RowBytes {
			return memory.Region{}
		}
		return memory.Region{Base: r.Base + uint64(row)*r.Pitch + uint64(col),
			Rows: 1, RowBytes: min(chunkBytes, r.RowBytes-col), Pitch: r.Pitch}
	}
	rows := chunkBytes / rowBytes
	first := chunk * rows
	if first >= r.Rows {
		return memory.Region{}
	}
	return memory.Region{Base: r.Base + uint64(first)*r.Pitch,
		Rows: min(rows, r.Rows-first), RowBytes: r.RowBytes, Pitch: r.Pitch}
}

// epilogueRegion is the part of the CTA's output (D, or the split-K
// partials) one STG or LDG chunk of warp w covers: chunk j of m16 row
// block m of the warp tile, rows of the warp tile's width.
func (c *cta) epilogueRegion(w int, chunk int, base uint64) memory.Region {
	p, g := c.plan, c.plan.shape
	ob := p.outBytes
	if base == baseSplit {
		ob = accumulatorBytes
	}
	warpsM := p.tile.BM / p.tile.WarpM
	wm, wn := w%warpsM, w/warpsM
	rowBytes := p.tile.WarpN * ob
	perRow := max(1, rowBytes/chunkBytes)
	rowsPer := max(1, chunkBytes/rowBytes)
	blockChunks := ceilDiv(p.inst.M*rowBytes, chunkBytes)
	m, j := chunk/blockChunks, chunk%blockChunks
	row := c.tm*p.tile.BM + wm*p.tile.WarpM + m*p.inst.M
	col := c.tn*p.tile.BN + wn*p.tile.WarpN
	nrows := min(rowsPer, p.inst.M)
	if rowBytes >= chunkBytes {
		row += j / perRow
		col += (j % perRow) * chunkBytes / ob
		nrows = 1
	} else {
		row += j * rowsPer
	}
	nrows = min(nrows, g.M-row)
	ncols := min(p.tile.WarpN, g.N-col)
	if rowBytes >= chunkBytes {
		ncols = min(chunkBytes/ob, g.N-col)
	}
	if nrows <= 0 || ncols <= 0 {
		return memory.Region{}
	}
	pitch := uint64(g.N * ob)
	off := uint64(c.split*g.Batch+c.batch) * uint64(g.M) * pitch
	return memory.Region{Base: base + off + uint64(row)*pitch + uint64(col*ob),
		Rows: nrows, RowBytes: ncols * ob, Pitch: pitch}
}

// barrier records warp w at the CTA's barrier at cycle now; when the last
// warp arrives, all resume barrier_latency cycles later.
func (c *cta) barrier(now uint64) {
	c.arrived++
	if c.arrived < len(c.warps)-c.exited {
		return
	}
	c.arrived = 0
	release := now + uint64(c.sm.gpu.cfg.SM.BarrierLatency)
	if f := c.sm.gpu.ff; f != nil && c.warps[0].section == 1 {
		f.released(c, c.warps[0].iter, release) // a k-step's barrier
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
	c.sm.gpu.ctaFinished(c, c.lastDone)
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
	return fmt.Sprintf("sim%d.%s.CTA%d", c.sm.gpu.serial, c.sm.Name(), c.idx)
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
