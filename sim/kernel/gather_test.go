package kernel

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// vnmPlan plans an fp16 GEMM of pattern pat on tile bm x bn x 64, warps
// wm x wn, 3 stages.
func vnmPlan(t *testing.T, pat string, m, n, k int, lay string, tile [4]int) (*Plan, error) {
	t.Helper()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tensorcore.ParsePattern(pat)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLayout(lay)
	if err != nil {
		t.Fatal(err)
	}
	tc := configs.TileConfig{BM: tile[0], BN: tile[1], BK: 64, WarpM: tile[2], WarpN: tile[3], Stages: 3}
	return New(ld.Config, Shape{M: m, N: n, K: k, Batch: 1, Precision: tensorcore.FP16,
		Sparse: true, Pattern: p, Layout: l}, tc, 1)
}

// The V:N:M plan is Spatha's: 2:4 mma.sp over the gathered K (4 of
// every M), one index read (LDS) and one address computation per copy of
// B, and B's copies reading, group by group, 4 adjacent rows of the M
// that the group's columns index.
func TestGatherPlan(t *testing.T) {
	p, err := vnmPlan(t, "64:2:16", 256, 512, 2048, "tt", [4]int{64, 128, 32, 64})
	if err != nil {
		t.Fatal(err)
	}
	if p.Pattern != (tensorcore.Pattern{N: 2, M: 4}) || p.PaddedK != 2048*4/16 {
		t.Fatalf("runs %s over K %d, want 2:4 over %d", p.Pattern, p.PaddedK, 2048*4/16)
	}
	for w := range p.Warps {
		prog := p.Program(w)
		var lds, copiesB int
		for _, list := range [][]isa.Instr{prog.Prologue, prog.Body} {
			loaded := map[isa.Reg]bool{}  // registers an index read wrote
			address := map[isa.Reg]bool{} // registers an address computed from one
			for _, in := range list {
				switch {
				case in.Op == isa.OpLDS && in.Operand == isa.OperandE:
					lds++
					loaded[in.Dst.First] = true
				case in.Op == isa.OpALU && loaded[in.Src[0].First]:
					address[in.Dst.First] = true
				case in.Op == isa.OpLDGSTS && in.Operand == isa.OperandB:
					copiesB++
					if !address[in.Src[0].First] {
						t.Fatalf("warp %d: a B copy does not read a gathered address", w)
					}
				}
			}
		}
		if lds != copiesB || copiesB == 0 {
			t.Errorf("warp %d: %d index reads for %d B copies", w, lds, copiesB)
		}
	}
	// Every B chunk lies in one gathered group: 4 rows of B (K x N, N
	// contiguous) inside one group of 16.
	c := NewCTA(p, 0)
	rowPitch := uint64(512 * 2)
	chunks := CeilDiv(p.BStageB, ChunkBytes)
	seen := map[uint64]bool{}
	for j := range chunks {
		_, r := c.ChunkRegion(0, isa.OperandB, j)
		if r.Rows == 0 || r.Pitch != rowPitch {
			t.Fatalf("chunk %d: %+v", j, r)
		}
		first := (r.Base - baseB) / rowPitch
		if first/16 != (first+uint64(r.Rows)-1)/16 {
			t.Errorf("chunk %d: rows %d..%d cross a group of 16", j, first, first+uint64(r.Rows)-1)
		}
		seen[first/16] = true
	}
	if len(seen) != p.Tile.BK/4 {
		t.Errorf("a k-step's B copies read %d groups of M, want %d (one per 4 gathered rows)", len(seen), p.Tile.BK/4)
	}
	// The stage carries the column indices (a 32-bit word per gathered
	// column) after A's metadata.
	if want := p.metaBytes(p.Tile.BM, p.Pattern.Kept(p.Tile.BK)) + 4*p.Tile.BK; p.MetaStageB != want {
		t.Errorf("metadata stage %d B, want %d", p.MetaStageB, want)
	}
	if p.GatherLDS.Wavefronts != 1 {
		t.Errorf("the index read takes %d wavefronts, want 1 (a broadcast)", p.GatherLDS.Wavefronts)
	}
}

// CTAs of one V block read the same rows of B and the same indices;
// CTAs of another read other rows.
func TestGatherRowsFollowVBlocks(t *testing.T) {
	p, err := vnmPlan(t, "64:2:32", 256, 512, 2048, "tt", [4]int{64, 128, 32, 64})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(tileM int) map[uint64]bool {
		out := map[uint64]bool{}
		for i := range p.CTAs {
			c := NewCTA(p, i)
			if c.TileM != tileM || c.TileN != 0 {
				continue
			}
			for _, r := range c.Tiles(0) {
				if r.Class == memory.BOperand {
					out[r.Region.Base] = true
				}
			}
		}
		return out
	}
	a, b := rows(0), rows(1)
	diff := 0
	for r := range a {
		if !b[r] {
			diff++
		}
	}
	if len(a) == 0 || diff == 0 {
		t.Errorf("V blocks 0 and 1 read the same %d B groups", len(a))
	}
	q, err := vnmPlan(t, "128:2:32", 256, 512, 2048, "tt", [4]int{64, 128, 32, 64})
	if err != nil {
		t.Fatal(err)
	}
	var tile0, tile1 *CTA // tiles 0 and 1 of column 0: one V block of 128 rows
	for i := range q.CTAs {
		c := NewCTA(q, i)
		if c.TileN == 0 && c.TileM == 0 {
			tile0 = &c
		}
		if c.TileN == 0 && c.TileM == 1 {
			tile1 = &c
		}
	}
	if tile0 == nil || tile1 == nil || tile0.vBlock() != tile1.vBlock() {
		t.Fatal("tiles 0 and 1 of a 128-row V block not found in one block")
	}
	if tile0.colIdxRegion(0, 64) != tile1.colIdxRegion(0, 64) {
		t.Error("two CTAs of one V block read different column indices")
	}
	for j := range 2 {
		_, r0 := tile0.ChunkRegion(0, isa.OperandB, j)
		_, r1 := tile1.ChunkRegion(0, isa.OperandB, j)
		if r0 != r1 {
			t.Errorf("chunk %d: two CTAs of one V block copy different rows of B", j)
		}
	}
}

// The kernel refuses what Spatha's cannot run, naming the rule.
func TestGatherRules(t *testing.T) {
	for _, tc := range []struct {
		pat, lay string
		tile     [4]int
		rule     string
	}{
		{"64:2:8", "tt", [4]int{128, 128, 64, 64}, "bm 128 does not divide V = 64"},
		{"64:2:8", "tt", [4]int{64, 32, 32, 32}, "bn 32 x 2 B is under 128 B"},
	} {
		_, err := vnmPlan(t, tc.pat, 256, 512, 1024, tc.lay, tc.tile)
		if err == nil || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%s %s %v: %v, want %q", tc.pat, tc.lay, tc.tile, err, tc.rule)
		}
	}
}

// On a column-major B (tn, the default) the plan runs the same gather
// kernel on B's row-major copy, which a transpose launch makes first
// (Spatha has no column-major B path): TransposeB, and the copy's
// layout.
func TestGatherTransposesColumnMajorB(t *testing.T) {
	for _, lay := range []string{"tn", "nn", "tt", "nt"} {
		p, err := vnmPlan(t, "64:2:8", 256, 512, 1024, lay, [4]int{64, 128, 32, 64})
		if err != nil {
			t.Fatalf("%s: %v", lay, err)
		}
		if want := lay[1] == 'n'; p.TransposeB != want || !p.Shape.Layout.RowB {
			t.Errorf("%s: TransposeB %v, B row-major %v; want %v, true", lay,
				p.TransposeB, p.Shape.Layout.RowB, want)
		}
		k := p.TransposeKernel()
		if want := uint64(1024 * 512 * 2); k.InBytes != want || len(k.Outs) != 1 || k.Outs[0].Bytes != want {
			t.Errorf("%s: the copy reads %d and writes %v B, want B's %d each way", lay, k.InBytes, k.Outs, want)
		}
	}
}
