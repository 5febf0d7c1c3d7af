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
)

type ClassRegion struct {
	Class  memory.Class
	Region memory.Region
}

// StageRegions are the global-memory tiles of k-step k: A values (rows of
// the kept K/2 for sparse), A metadata (one contiguous block per tile and
// k-step: the reordered layout CUTLASS and cuSPARSELt use) and B (K-major,
// as nn.Linear activations are).
func (c *CTA) StageRegions(k int) []ClassRegion {
	p, g := c.Plan, c.Plan.Shape
	e := p.ElemBytes
	k0 := c.Split*p.kPerSplit + k*p.Tile.BK
	kLen := max(0, min(p.Tile.BK, p.PaddedK-k0))
	if !g.Sparse {
		kLen = max(0, min(p.Tile.BK, g.K-k0))
	}
	keep := func(v int) int { return v * p.Pattern.N / p.Pattern.M }
	rowsA := max(0, min(p.Tile.BM, g.M-c.TileM*p.Tile.BM))
	rowsB := max(0, min(p.Tile.BN, g.N-c.TileN*p.Tile.BN))
	pitchA := uint64(keep(p.PaddedK) * e)
	aOff := uint64(c.batch) * uint64(g.M) * pitchA
	regions := []ClassRegion{{memory.AValues, memory.Region{
		Base: baseA + aOff + uint64(c.TileM*p.Tile.BM)*pitchA +
			uint64(keep(k0)*e),
		Rows: rowsA, RowBytes: keep(kLen) * e, Pitch: pitchA}}}
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
		keep = func(v int) int { return v * p.Pattern.N / p.Pattern.M }
	}
	pitchB := uint64(keep(p.PaddedK) * e)
	bOff := uint64(c.batch) * uint64(g.N) * pitchB
	regions := []ClassRegion{{memory.BOperand, memory.Region{
		Base: baseB + bOff + uint64(c.TileN*p.Tile.BN)*pitchB + uint64(keep(k0)*e),
		Rows: rowsB, RowBytes: keep(kLen) * e, Pitch: pitchB}}}
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
