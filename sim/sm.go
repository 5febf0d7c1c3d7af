package sim

import (
	"fmt"

	"github.com/sarchlab/akita/v3/tracing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
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
	ldsm, ldsmE, cpAsync, staging memory.Pattern
	fill                          memory.Pattern // k-step SM: cp.async fills
	lastFinish                    uint64         // the cycle its latest CTA finished
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

// start starts CTA idx on this SM now (the dispatcher's launch event).
func (s *smUnit) start(now uint64, idx int) {
	if s.gpu.cfg.SM.Fidelity == "kstep" {
		newKCTA(s, idx).launch(now)
		return
	}
	newCTA(s, idx).launch(now)
}

// patterns sets the shared-memory patterns of the SM's accesses from
// their addresses: ldmatrix.x4 rows of 16 B in a 128-byte-row tile with
// CUTLASS's XOR swizzle (chunk c of row r at c ^ (r mod 8)), the
// metadata's 4-byte-per-thread words, and the cp.async and epilogue
// 16-byte-per-thread stores into swizzled rows.
func (s *smUnit) patterns() {
	cfg := s.gpu.cfg.Memory.SharedMemory
	s.ldsm = memory.PatternFromAddrs("ldsm.x4", memory.LdMatrixAddrs(128, 0, true), 16, cfg)
	words := make([]uint64, 32)
	for i := range words {
		words[i] = uint64(4 * i)
	}
	s.ldsmE = memory.PatternFromAddrs("ldsm metadata", words, 4, cfg)
	s.cpAsync = memory.PatternFromAddrs("cp.async.16", memory.LdMatrixAddrs(128, 0, true), 16, cfg)
	s.staging = memory.PatternFromAddrs("epilogue sts/lds.128", memory.LdMatrixAddrs(128, 0, true), 16, cfg)
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
}

// stageTiles caches the global tiles of one k-step.
type stageTiles struct {
	k    int
	list []classRegion
}

func newCTA(s *smUnit, idx int) *cta {
	p := s.gpu.plan
	c := &cta{sm: s, plan: p, idx: idx}
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
func (c *cta) chunkRegion(k int, op Operand, chunk int) (memory.Class, memory.Region) {
	class := memory.BOperand
	switch op {
	case OperandA:
		class = memory.AValues
	case OperandE:
		class = memory.AMeta
	}
	if k >= c.steps {
		return class, memory.Region{}
	}
	for _, r := range c.tiles(k) {
		if r.class != class {
			continue
		}
		return class, chunkOf(r.region, c.fullRowBytes(op), chunk)
	}
	return class, memory.Region{}
}

// fullRowBytes is the row length of op's stage tile before clipping at
// the matrix edge: the row pitch of the tile in shared memory.
func (c *cta) fullRowBytes(op Operand) int {
	p := c.plan
	switch op {
	case OperandA:
		return p.tile.BK * p.pattern.N / p.pattern.M * p.elemBytes
	case OperandB:
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
