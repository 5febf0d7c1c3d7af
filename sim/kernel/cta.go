package kernel

import (
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
)

// CTA is one CTA of a launch as the kernel defines it: its
// coordinates (output tile, batch and K split), its k-steps and the
// global regions each of its copies, loads and stores covers. It is a
// value with no SM or engine: the running CTA embeds it, and the split-K
// reduction and the pruner's bounds use it on their own.
type CTA struct {
	Plan  *Plan
	Index int
	batch int
	TileM int
	TileN int
	Split int
	Steps int // k-steps of this CTA's split (the last split takes the remainder)
	// KStart is the first k-step of the tile the CTA's segment runs.
	KStart int
	// Segs are the CTA's segments (one but for stream-K) and Seg the one
	// running; the fields above are Segs[Seg]'s.
	Segs []Segment
	Seg  int
	// Regions caches the global tiles of the k-steps in flight, one slot
	// per stage.
	Regions []stageTiles
}

// stageTiles caches the global tiles of one k-step.
type stageTiles struct {
	k    int
	list []ClassRegion
}

// NewCTA is CTA idx of plan p: its coordinates and the global
// tiles its copies read.
func NewCTA(p *Plan, idx int) CTA {
	c := CTA{Plan: p, Index: idx, Segs: p.segments(idx)}
	c.enter(0)
	c.Regions = make([]stageTiles, p.Tile.Stages+1)
	for i := range c.Regions {
		c.Regions[i].k = -1
	}
	return c
}

// enter makes segment i the CTA's running one.
func (c *CTA) enter(i int) {
	s := c.Segs[i]
	c.Seg, c.batch, c.TileM, c.TileN, c.Split = i, s.Batch, s.TileM, s.TileN, s.Split
	c.Steps, c.KStart = s.Steps, s.KStart
	for j := range c.Regions {
		c.Regions[j].k = -1
	}
}

// Advance moves the CTA on to its next segment; false when the running
// one was its last.
func (c *CTA) Advance() bool {
	if c.Seg+1 >= len(c.Segs) {
		return false
	}
	c.enter(c.Seg + 1)
	return true
}

// Last says whether the running segment is the CTA's last.
func (c *CTA) Last() bool { return c.Seg == len(c.Segs)-1 }

// Epi is the running segment's epilogue.
func (c *CTA) Epi() Epilogue { return c.Segs[c.Seg].Epi }

// Program is warp w's stream for the running segment.
func (c *CTA) Program(w int) *isa.Program {
	return c.Plan.ProgramFor(w, c.Epi(), c.Last())
}

// Tiles are the global tiles of k-step k (cached per stage slot).
func (c *CTA) Tiles(k int) []ClassRegion {
	slot := &c.Regions[k%len(c.Regions)]
	if slot.k != k {
		slot.k, slot.list = k, c.StageRegions(k)
	}
	return slot.list
}

// ChunkRegion is the part of k-step k's tile of op that one warp's
// LDGSTS chunk copies (Rows 0: the chunk lies outside the matrix and the
// copy is predicated off, as CUTLASS's zero-fill copies are).
func (c *CTA) ChunkRegion(k int, op isa.Operand, chunk int) (memory.Class, memory.Region) {
	class := memory.BOperand
	switch op {
	case isa.OperandA:
		class = memory.AValues
	case isa.OperandE:
		class = memory.AMeta
	}
	if k >= c.Steps {
		return class, memory.Region{}
	}
	if op == isa.OperandE {
		return class, c.metaChunk(k, chunk)
	}
	for _, r := range c.Tiles(k) {
		if r.Class == class {
			return class, chunkOf(r.Region, c.fullRowBytes(op), chunk)
		}
	}
	return class, memory.Region{}
}

// metaChunk is chunk j of k-step k's metadata: the stage's metadata
// blocks (A's, then B's in dual-side mode) laid end to end in shared
// memory, 512 bytes to a chunk.
func (c *CTA) metaChunk(k, chunk int) memory.Region {
	p := c.Plan
	keptK := p.Pattern.Kept(p.Tile.BK)
	blocks := []int{p.metaBytes(p.Tile.BM, keptK), p.metaBytes(p.Tile.BN, keptK)}
	off, i := chunk*ChunkBytes, 0
	for _, r := range c.Tiles(k) {
		if r.Class != memory.AMeta {
			continue
		}
		block := blocks[min(i, 1)]
		i++
		if off >= block {
			off -= block
			continue
		}
		if off >= r.Region.RowBytes {
			return memory.Region{}
		}
		return memory.Region{Base: r.Region.Base + uint64(off), Rows: 1,
			RowBytes: min(ChunkBytes, r.Region.RowBytes-off), Pitch: r.Region.Pitch}
	}
	return memory.Region{}
}

// fullRowBytes is the row length of op's stage tile before clipping at
// the matrix edge: the row pitch of the tile in shared memory.
func (c *CTA) fullRowBytes(op isa.Operand) int {
	p := c.Plan
	switch op {
	case isa.OperandA:
		if !p.Shape.Layout.KMajorA() {
			return p.Tile.BM * p.ElemBytes
		}
		return p.Pattern.Kept(p.Tile.BK) * p.ElemBytes
	case isa.OperandB:
		if !p.Shape.Layout.KMajorB() {
			return p.Tile.BN * p.ElemBytes
		}
		return p.Tile.BK * p.ElemBytes
	}
	return p.MetaStageB
}

// chunkOf cuts the 512-byte chunk of a tile whose rows are rowBytes long
// in shared memory out of its (possibly clipped) global region.
func chunkOf(r memory.Region, rowBytes, chunk int) memory.Region {
	if r.Rows == 0 || r.RowBytes == 0 {
		return memory.Region{}
	}
	if rowBytes >= ChunkBytes {
		perRow := rowBytes / ChunkBytes
		row, col := chunk/perRow, (chunk%perRow)*ChunkBytes
		if row >= r.Rows || col >= r.RowBytes {
			return memory.Region{}
		}
		return memory.Region{Base: r.Base + uint64(row)*r.Pitch + uint64(col),
			Rows: 1, RowBytes: min(ChunkBytes, r.RowBytes-col), Pitch: r.Pitch}
	}
	rows := ChunkBytes / rowBytes
	first := chunk * rows
	if first >= r.Rows {
		return memory.Region{}
	}
	return memory.Region{Base: r.Base + uint64(first)*r.Pitch,
		Rows: min(rows, r.Rows-first), RowBytes: r.RowBytes, Pitch: r.Pitch}
}

// EpilogueRegion is the part of the CTA's output (D, or the split-K
// partials) one STG or LDG chunk of warp w covers: chunk j of m16 row
// block m of the warp tile, rows of the warp tile's width.
func (c *CTA) EpilogueRegion(w int, chunk int, base uint64) memory.Region {
	p, g := c.Plan, c.Plan.Shape
	ob := p.OutBytes
	if base == BaseSplit {
		ob = AccumulatorBytes
	}
	split := 0
	if base == BaseSplit {
		split = c.Split
	}
	warpsM := p.Tile.BM / p.Tile.WarpM
	wm, wn := w%warpsM, w/warpsM
	rowBytes := p.Tile.WarpN * ob
	perRow := max(1, rowBytes/ChunkBytes)
	rowsPer := max(1, ChunkBytes/rowBytes)
	blockChunks := CeilDiv(p.Inst.M*rowBytes, ChunkBytes)
	m, j := chunk/blockChunks, chunk%blockChunks
	row := c.TileM*p.Tile.BM + wm*p.Tile.WarpM + m*p.Inst.M
	col := c.TileN*p.Tile.BN + wn*p.Tile.WarpN
	nrows := min(rowsPer, p.Inst.M)
	if rowBytes >= ChunkBytes {
		row += j / perRow
		col += (j % perRow) * ChunkBytes / ob
		nrows = 1
	} else {
		row += j * rowsPer
	}
	nrows = min(nrows, g.M-row)
	ncols := min(p.Tile.WarpN, g.N-col)
	if rowBytes >= ChunkBytes {
		ncols = min(ChunkBytes/ob, g.N-col)
	}
	if nrows <= 0 || ncols <= 0 {
		return memory.Region{}
	}
	pitch := uint64(g.N * ob)
	off := uint64(split*g.Batch+c.batch) * uint64(g.M) * pitch
	return memory.Region{Base: base + off + uint64(row)*pitch + uint64(col*ob),
		Rows: nrows, RowBytes: ncols * ob, Pitch: pitch}
}

// PartialChunks is the 512-byte chunks of one warp's FP32 accumulators.
func (p *Plan) PartialChunks() int {
	return CeilDiv(p.Tile.WarpM*p.Tile.WarpN*AccumulatorBytes, ChunkBytes)
}

// PartialRegion is chunk j of warp w's accumulators in the stream-K
// workspace slot of the running segment's flag (its tile's first peer):
// CUTLASS's BlockStripedReduce lays the tile's accumulator fragments out
// thread-striped, so each warp instruction's 16 B per thread is one
// contiguous 512-byte run, warp after warp.
func (c *CTA) PartialRegion(w, chunk int) memory.Region {
	p := c.Plan
	slot := uint64(p.Tile.BM * p.Tile.BN * AccumulatorBytes)
	off := uint64(c.Epi().Flag)*slot + uint64(chunk*p.Warps+w)*ChunkBytes
	return memory.Region{Base: BasePartials + off, Rows: 1, RowBytes: ChunkBytes,
		Pitch: ChunkBytes}
}

// FlagRegion is the 4-byte flag of the running segment: a semaphore per
// tile (serial split-K) or a barrier per first peer (stream-K).
func (c *CTA) FlagRegion() memory.Region {
	return memory.Region{Base: BaseFlags + uint64(c.Epi().Flag)*4, Rows: 1,
		RowBytes: 4, Pitch: 4}
}
