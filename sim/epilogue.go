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
)

// epilogueStaging is the epilogue's trip through shared memory: the warps
// store accumulator fragments (16 B per thread, swizzled, conflict-free)
// and read them back as row-major vectors for coalesced global stores.
var epilogueStaging = memory.Pattern{Name: "epilogue sts.128/lds.128",
	BytesPerInstr: 512, Wavefronts: 4}

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
			RowBytes: ceilDiv(rowsA*keep(kLen)*p.metaBits, 8),
			Pitch:    uint64(p.metaStageB)}})
	}
	pitchB := uint64(p.paddedK * e)
	bOff := uint64(c.batch) * uint64(g.N) * pitchB
	regions = append(regions, classRegion{memory.BOperand, memory.Region{
		Base: baseB + bOff + uint64(c.tn*p.tile.BN)*pitchB + uint64(k0*e),
		Rows: rowsB, RowBytes: kLen * e, Pitch: pitchB}})
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

// epilogue reads C when beta is not 0, stages the accumulators through
// shared memory into row-major tiles, and stores D (or the split-K
// partials). The CTA's slot frees when its stores have left.
func (c *cta) epilogue(now uint64) {
	g := c.sm.gpu
	if g.cfg.Kernel.Beta != 0 && c.plan.splitK == 1 {
		r := c.outputRegion(baseC, c.plan.outBytes)
		g.mem.Read(now, c.sm.id, memory.CRead, r, true, c.store)
		return
	}
	c.store(now)
}

func (c *cta) store(now uint64) {
	p := c.plan
	g := c.sm.gpu
	r := c.outputRegion(baseD, p.outBytes)
	if p.splitK > 1 {
		r = c.outputRegion(baseSplit, accumulatorBytes)
	}
	staged := c.sm.smem.Access(now, epilogueStaging, 2*r.Rows*r.RowBytes)
	c.sm.at(staged, func() {
		g.mem.Write(staged, c.sm.id, memory.DWrite, r, func(at uint64) {
			c.traceEnd(c.taskID(-1))
			g.ctaFinished(c, at)
		})
	})
}
