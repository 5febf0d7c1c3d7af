package kernel

import (
	"github.com/stcsim/stcsim/memory"
)

// Address spaces of the operands (1 TiB apart, so they never alias).
const (
	baseA     uint64 = 1 << 40
	baseMeta  uint64 = 2 << 40
	baseB     uint64 = 3 << 40
	BaseC     uint64 = 4 << 40
	BaseD     uint64 = 5 << 40
	BaseSplit uint64 = 6 << 40
	baseBMeta uint64 = 7 << 40
	// BasePartials is stream-K's workspace of partial tiles and BaseFlags
	// the flags (semaphores, barriers) serial split-K and stream-K wait on.
	BasePartials uint64 = 8 << 40
	BaseFlags    uint64 = 9 << 40
)

// ClassRegion is a global-memory region and the traffic class its
// accesses are booked to.
type ClassRegion struct {
	Class  memory.Class
	Region memory.Region
}

// StageRegions are the global-memory tiles of k-step k: A values (rows of
// the kept K/2 for sparse), A metadata (one contiguous block per tile and
// k-step: the reordered layout CUTLASS and cuSPARSELt use, whatever A's
// layout) and B, each laid out as the shape's Layout says (tn: both
// K-major, as nn.Linear's operands are).
func (c *CTA) StageRegions(k int) []ClassRegion {
	p, g := c.Plan, c.Plan.Shape
	e := p.ElemBytes
	k0 := (c.KStart + k) * p.Tile.BK
	kLen := max(0, min(p.Tile.BK, p.PaddedK-k0))
	if !g.Sparse {
		kLen = max(0, min(p.Tile.BK, g.K-k0))
	}
	keep := p.Pattern.Kept
	rowsA := max(0, min(p.Tile.BM, g.M-c.TileM*p.Tile.BM))
	rowsB := max(0, min(p.Tile.BN, g.N-c.TileN*p.Tile.BN))
	regions := []ClassRegion{{memory.AValues, operandTile(baseA, c.batch,
		g.M, keep(p.PaddedK), c.TileM*p.Tile.BM, rowsA, keep(k0), keep(kLen),
		e, g.Layout.KMajorA())}}
	if g.Sparse && kLen > 0 {
		tileIdx := uint64((c.batch*p.TilesM+c.TileM)*CeilDiv(p.PaddedK,
			p.Tile.BK) + k0/p.Tile.BK)
		regions = append(regions, ClassRegion{memory.AMeta, memory.Region{
			Base: baseMeta + tileIdx*uint64(p.MetaStageB), Rows: 1,
			RowBytes: p.metaBytes(rowsA, keep(kLen)),
			Pitch:    uint64(p.MetaStageB)}})
	}
	return append(regions, c.bRegions(k0, kLen, rowsB)...)
}

// bRegions are B's tile of a k-step: K-major rows, and in dual-side mode
// only the kept values plus B's metadata block (counted as metadata).
func (c *CTA) bRegions(k0, kLen, rowsB int) []ClassRegion {
	p, g := c.Plan, c.Plan.Shape
	e := p.ElemBytes
	keep := func(v int) int { return v }
	if g.Dual {
		keep = p.Pattern.Kept
	}
	regions := []ClassRegion{{memory.BOperand, operandTile(baseB, c.batch,
		g.N, keep(p.PaddedK), c.TileN*p.Tile.BN, rowsB, keep(k0), keep(kLen),
		e, g.Layout.KMajorB())}}
	if g.Dual && kLen > 0 {
		block := uint64(p.metaBytes(p.Tile.BN, keep(p.Tile.BK)))
		tileIdx := uint64((c.batch*p.TilesN+c.TileN)*CeilDiv(p.PaddedK,
			p.Tile.BK) + k0/p.Tile.BK)
		regions = append(regions, ClassRegion{memory.AMeta, memory.Region{
			Base: baseBMeta + tileIdx*block, Rows: 1,
			RowBytes: p.metaBytes(rowsB, keep(kLen)), Pitch: block}})
	}
	return regions
}

// operandTile is the global region of one operand's stage tile: rows
// [row0, row0+rows) of its outer dimension (M of A, N of B; outer rows
// in all) by its K elements [k0, k0+kLen) of a matrix k elements deep,
// batch-th of the batched GEMM, elements of e bytes. K-major (A t, B n):
// each region row is one outer row's K slice, pitch k x e. Outer-major
// (A n, B t): each region row is one K index's slice of the outer rows,
// pitch outer x e, so a copy's 16-B vectors run along M or N.
func operandTile(base uint64, batch, outer, k, row0, rows, k0, kLen, e int,
	kMajor bool) memory.Region {
	if kMajor {
		pitch := uint64(k * e)
		return memory.Region{Base: base + uint64(batch)*uint64(outer)*pitch +
			uint64(row0)*pitch + uint64(k0*e), Rows: rows, RowBytes: kLen * e,
			Pitch: pitch}
	}
	pitch := uint64(outer * e)
	if rows == 0 {
		kLen = 0
	}
	return memory.Region{Base: base + uint64(batch)*uint64(k)*pitch +
		uint64(k0)*pitch + uint64(row0*e), Rows: kLen, RowBytes: rows * e,
		Pitch: pitch}
}

// EpilogueTiles are the whole output tiles the running segment's
// epilogue reads (its flag, polled; its source: C, or the D an earlier
// split wrote) and writes (D, or its plane of the split-K workspace; its
// flag, signalled); the stream-K partials, which its warps read and write
// chunk by chunk, are left out. The L2's warm start (gpu.warmL2) replays
// them.
func (c *CTA) EpilogueTiles() (reads, writes []ClassRegion) {
	p, e := c.Plan, c.Epi()
	if e.Waits() {
		reads = append(reads, ClassRegion{Class: memory.CRead, Region: c.FlagRegion()})
	}
	switch {
	case e.Source&SourceC != 0:
		reads = append(reads, ClassRegion{Class: memory.CRead, Region: c.outputRegion(BaseC, p.OutBytes)})
	case e.Source&SourceD != 0:
		reads = append(reads, ClassRegion{Class: memory.CRead, Region: c.outputRegion(BaseD, p.OutBytes)})
	}
	switch e.Dest {
	case DestD:
		writes = append(writes, ClassRegion{Class: memory.DWrite, Region: c.outputRegion(BaseD, p.OutBytes)})
	case DestSplitK:
		writes = append(writes, ClassRegion{Class: memory.DWrite, Region: c.outputRegion(BaseSplit, AccumulatorBytes)})
	}
	if e.Signal != SignalNone {
		writes = append(writes, ClassRegion{Class: memory.DWrite, Region: c.FlagRegion()})
	}
	return reads, writes
}

// outputRegion is the CTA's tile of D (row-major M x N), or of the split-K
// workspace of FP32 partial sums.
func (c *CTA) outputRegion(base uint64, bytesPer int) memory.Region {
	return c.Plan.OutputRegion(c.batch, c.TileM, c.TileN, c.Split, base, bytesPer)
}

// OutputRegion is output tile (tm, tn) of GEMM batch of split's part of D
// (row-major M x N), or of the split-K workspace of FP32 partial sums.
func (p *Plan) OutputRegion(batch, tm, tn, split int, base uint64, bytesPer int) memory.Region {
	g := p.Shape
	rows := max(0, min(p.Tile.BM, g.M-tm*p.Tile.BM))
	cols := max(0, min(p.Tile.BN, g.N-tn*p.Tile.BN))
	pitch := uint64(g.N * bytesPer)
	off := uint64(split*g.Batch+batch) * uint64(g.M) * pitch
	return memory.Region{Base: base + off + uint64(tm*p.Tile.BM)*pitch +
		uint64(tn*p.Tile.BN*bytesPer), Rows: rows,
		RowBytes: cols * bytesPer, Pitch: pitch}
}
