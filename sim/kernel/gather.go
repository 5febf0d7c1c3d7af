package kernel

import (
	"fmt"

	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/memory/smem"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// The V:N:M kernel runs a vector-wise sparse A on the A100's own 2:4
// sparse tensor core, as VENOM's Spatha does (Castro et al., SC'23;
// github.com/LopezCastroRoberto/venom, include/spatha/block_sparse/spmm/
// blockwise_kernel.h): every block of V rows of A keeps the same 4 of
// every M columns, 2:4 within them, so the kernel is a 2:4 sparse GEMM
// over the gathered K (4/M of K) whose B tile holds only the gathered
// rows. What that costs beyond the 2:4 GEMM, each through the modelled
// structures:
//
//   - the column indices of each V block (one 32-bit word per gathered
//     column, Spatha's A_indices) copied into shared memory with the
//     stage's metadata (cp.async, metadata traffic; CTAs of one V block
//     read the same indices);
//   - per cp.async chunk of B, the index read from shared memory (LDS)
//     and the row address computed from it (ALU) before the copy can
//     issue (its scoreboard waits on both);
//   - B's rows gathered from the whole of B: CTAs of different V blocks
//     read different rows, so the smaller V, the more of B crosses DRAM
//     and the less L2 reuse there is.
//
// Like Spatha, the kernel needs B row-major (a gathered row is a
// contiguous run along N; a column-major B is first copied row-major by
// a launch of its own, transpose.go), a CTA's rows inside one V block
// (the tile's bm divides V), and runs data-parallel (no split-K).

// baseColIdx is the address space of V:N:M column indices.
const baseColIdx uint64 = 10 << 40

// gatherWidth is the columns of every M a V:N:M block keeps: the 4 a 2:4
// mma.sp reads.
const gatherWidth = 4

// gathers says whether the plan is the V:N:M gather kernel.
func (p *Plan) gathers() bool {
	return p.Shape.Sparse && p.Format.Family() == tensorcore.FamilyVNM
}

// checkGather refuses a tile or schedule the V:N:M kernel cannot run.
func (p *Plan) checkGather() error {
	if !p.gathers() {
		return nil
	}
	t, f := p.Tile, p.Format
	switch {
	case f.V%t.BM != 0:
		return fmt.Errorf("tile %s: sparsity %s: bm %d does not divide V = %d "+
			"(a CTA's rows must share one column selection)", t.Name(), f, t.BM, f.V)
	case gatherWidth*t.BN*p.ElemBytes < ChunkBytes:
		return fmt.Errorf("tile %s: sparsity %s: bn %d x %d B is under %d B, so a "+
			"cp.async chunk of B would span two gathered groups", t.Name(), f, t.BN,
			p.ElemBytes, ChunkBytes/gatherWidth)
	case p.Schedule != DataParallel:
		return fmt.Errorf("tile %s: sparsity %s: the V:N:M kernel runs data-parallel "+
			"only (Spatha has no split-K), not %s", t.Name(), f, p.Schedule)
	}
	return nil
}

// colIdxBytes is the column indices of kLen gathered columns of one V
// block.
func (p *Plan) colIdxBytes(kLen int) int { return kLen * p.Format.ColumnIndexBits() / 8 }

// gatheredRow is the row of B that gathered row r of V block vb reads:
// in gathered group r/4, the 4 kept columns of that group of M. The
// synthetic mask keeps 4 adjacent columns at an offset drawn per (V
// block, group) from tensorcore.mask_seed; a real mask's 4 may be
// apart, which moves the same lines (each row of B is its own lines).
func (p *Plan) gatheredRow(vb, r int) int {
	grp := r / gatherWidth
	x := uint64(p.maskSeed)*0x9e3779b97f4a7c15 ^ uint64(vb)<<32 ^ uint64(grp)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	off := int(x % uint64(p.Format.M-gatherWidth+1))
	return grp*p.Format.M + off + r%gatherWidth
}

// vBlock is the V block of the CTA's rows, counted over the batch.
func (c *CTA) vBlock() int {
	p := c.Plan
	return c.batch*CeilDiv(p.Shape.M, p.Format.V) + c.TileM*p.Tile.BM/p.Format.V
}

// colIdxRegion is the column indices of k-step tile [k0, k0+kLen) of the
// CTA's V block.
func (c *CTA) colIdxRegion(k0, kLen int) ClassRegion {
	p := c.Plan
	pitch := uint64(p.colIdxBytes(p.Tile.BK))
	idx := uint64(c.vBlock()*CeilDiv(p.PaddedK, p.Tile.BK) + k0/p.Tile.BK)
	return ClassRegion{memory.AMeta, memory.Region{Base: baseColIdx + idx*pitch,
		Rows: 1, RowBytes: p.colIdxBytes(kLen), Pitch: pitch}}
}

// gatherRegions are B's gathered rows of k-step tile [k0, k0+kLen): one
// region per gathered group (4 adjacent rows of B, rowsB wide), or none
// past K.
func (c *CTA) gatherRegions(k0, kLen, rowsB int) []ClassRegion {
	p, g := c.Plan, c.Plan.Shape
	out := make([]ClassRegion, 0, CeilDiv(kLen, gatherWidth))
	for r := 0; r < kLen; r += gatherWidth {
		row := p.gatheredRow(c.vBlock(), k0+r)
		rows := min(gatherWidth, kLen-r, max(0, g.K-row))
		out = append(out, ClassRegion{memory.BOperand, operandTile(baseB, c.batch,
			g.N, g.K, c.TileN*p.Tile.BN, rowsB, row, rows, p.ElemBytes, false)})
	}
	return out
}

// gatherChunk is the part of k-step k's gathered B that one warp's
// LDGSTS chunk copies: chunks run group by group (checkGather keeps a
// chunk inside one group).
func (c *CTA) gatherChunk(k, chunk int) memory.Region {
	rowBytes := c.fullRowBytes(isa.OperandB)
	perGroup := gatherWidth * rowBytes / ChunkBytes
	i := chunk / perGroup
	for _, r := range c.Tiles(k) {
		if r.Class != memory.BOperand {
			continue
		}
		if i == 0 {
			return chunkOf(r.Region, rowBytes, chunk%perGroup)
		}
		i--
	}
	return memory.Region{}
}

// gatherIndexPattern is the shared-memory side of one index LDS: thread t
// of the warp copies the 16 B at element t x 16/e of the stage's B tile,
// whose row (t x 16 / (bn x e)) names the 32-bit index it reads; threads
// of one row read one word (a broadcast).
func (p *Plan) gatherIndexPattern(cfg memory.SharedMemoryConfig) smem.Pattern {
	addrs := make([]uint64, 32)
	for t := range addrs {
		addrs[t] = uint64(t*16/(p.Tile.BN*p.ElemBytes)) * 4
	}
	return smem.PatternFromAddrs("lds index", addrs, 4, cfg)
}
