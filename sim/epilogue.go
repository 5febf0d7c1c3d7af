package sim

import (
	"github.com/stcsim/stcsim/memory"
)

// Address spaces of the operands (1 TiB apart, so they never alias).
const (
	baseA     uint64 = 1 << 40
	baseMeta  uint64 = 2 << 40
	baseB     uint64 = 3 << 40
	baseC     uint64 = 4 << 40
	baseD     uint64 = 5 << 40
	baseSplit uint64 = 6 << 40
	baseBMeta uint64 = 7 << 40
)

type classRegion struct {
	class  memory.Class
	region memory.Region
}

// stageRegions are the global-memory tiles of k-step k: A values (rows of
// the kept K/2 for sparse), A metadata (one contiguous block per tile and
// k-step: the reordered layout CUTLASS and cuSPARSELt use) and B (K-major,
// as nn.Linear activations are).
func (c *cta) stageRegions(k int) []classRegion {
	p, g := c.plan, c.plan.shape
	e := p.elemBytes
	k0 := c.split*p.kPerSplit + k*p.tile.BK
	kLen := max(0, min(p.tile.BK, p.paddedK-k0))
	if !g.Sparse {
		kLen = max(0, min(p.tile.BK, g.K-k0))
	}
	keep := func(v int) int { return v * p.pattern.N / p.pattern.M }
	rowsA := max(0, min(p.tile.BM, g.M-c.tm*p.tile.BM))
	rowsB := max(0, min(p.tile.BN, g.N-c.tn*p.tile.BN))
	pitchA := uint64(keep(p.paddedK) * e)
	aOff := uint64(c.batch) * uint64(g.M) * pitchA
	regions := []classRegion{{memory.AValues, memory.Region{
		Base: baseA + aOff + uint64(c.tm*p.tile.BM)*pitchA +
			uint64(keep(k0)*e),
		Rows: rowsA, RowBytes: keep(kLen) * e, Pitch: pitchA}}}
	if g.Sparse && kLen > 0 {
		tileIdx := uint64((c.batch*p.tilesM+c.tm)*ceilDiv(p.paddedK,
			p.tile.BK) + k0/p.tile.BK)
		regions = append(regions, classRegion{memory.AMeta, memory.Region{
			Base: baseMeta + tileIdx*uint64(p.metaStageB), Rows: 1,
			RowBytes: p.metaBytes(rowsA, keep(kLen)),
			Pitch:    uint64(p.metaStageB)}})
	}
	return append(regions, c.bRegions(k0, kLen, rowsB)...)
}

// bRegions are B's tile of a k-step: K-major rows, and in dual-side mode
// only the kept values plus B's metadata block (counted as metadata).
func (c *cta) bRegions(k0, kLen, rowsB int) []classRegion {
	p, g := c.plan, c.plan.shape
	e := p.elemBytes
	keep := func(v int) int { return v }
	if g.Dual {
		keep = func(v int) int { return v * p.pattern.N / p.pattern.M }
	}
	pitchB := uint64(keep(p.paddedK) * e)
	bOff := uint64(c.batch) * uint64(g.N) * pitchB
	regions := []classRegion{{memory.BOperand, memory.Region{
		Base: baseB + bOff + uint64(c.tn*p.tile.BN)*pitchB + uint64(keep(k0)*e),
		Rows: rowsB, RowBytes: keep(kLen) * e, Pitch: pitchB}}}
	if g.Dual && kLen > 0 {
		block := uint64(p.metaBytes(p.tile.BN, keep(p.tile.BK)))
		tileIdx := uint64((c.batch*p.tilesN+c.tn)*ceilDiv(p.paddedK,
			p.tile.BK) + k0/p.tile.BK)
		regions = append(regions, classRegion{memory.AMeta, memory.Region{
			Base: baseBMeta + tileIdx*block, Rows: 1,
			RowBytes: p.metaBytes(rowsB, keep(kLen)), Pitch: block}})
	}
	return regions
}

// outputRegion is the CTA's tile of D (row-major M x N), or of the split-K
// workspace of FP32 partial sums.
func (c *cta) outputRegion(base uint64, bytesPer int) memory.Region {
	p, g := c.plan, c.plan.shape
	rows := max(0, min(p.tile.BM, g.M-c.tm*p.tile.BM))
	cols := max(0, min(p.tile.BN, g.N-c.tn*p.tile.BN))
	pitch := uint64(g.N * bytesPer)
	off := uint64(c.split*g.Batch+c.batch) * uint64(g.M) * pitch
	return memory.Region{Base: base + off + uint64(c.tm*p.tile.BM)*pitch +
		uint64(c.tn*p.tile.BN*bytesPer), Rows: rows,
		RowBytes: cols * bytesPer, Pitch: pitch}
}
