package kernel

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/memory/smem"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

func TestParseLayout(t *testing.T) {
	for _, s := range []string{"nn", "nt", "tn", "tt"} {
		l, err := ParseLayout(s)
		if err != nil || l.String() != s {
			t.Errorf("ParseLayout(%q) = %v, %v", s, l, err)
		}
		if l.Transposed().Transposed() != l {
			t.Errorf("%s transposed twice is %s", s, l.Transposed().Transposed())
		}
	}
	if l, _ := ParseLayout(""); l != (Layout{}) || l.String() != "tn" {
		t.Errorf("empty layout = %v, want tn", l)
	}
	// D^T = B^T A^T: tn and nt stay, nn and tt swap.
	for from, to := range map[string]string{"tn": "tn", "nt": "nt", "nn": "tt", "tt": "nn"} {
		l, _ := ParseLayout(from)
		if got := l.Transposed().String(); got != to {
			t.Errorf("%s transposed is %s, want %s", from, got, to)
		}
	}
	for _, bad := range []string{"n", "tnn", "NT", "xt", "row"} {
		if _, err := ParseLayout(bad); err == nil {
			t.Errorf("ParseLayout(%q) accepted", bad)
		}
	}
}

// layoutPlan is the plan of an fp16 GEMM on a library tile in layout lay.
func layoutPlan(t *testing.T, lay string, sparse bool, prec tensorcore.Precision,
	m, n, k int, tile configs.TileConfig) *Plan {
	t.Helper()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLayout(lay)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ld.Config, Shape{M: m, N: n, K: k, Batch: 1, Precision: prec,
		Sparse: sparse, Layout: l}, tile, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	denseTile  = configs.TileConfig{BM: 128, BN: 128, BK: 32, WarpM: 64, WarpN: 64, Stages: 5}
	sparseTile = configs.TileConfig{BM: 128, BN: 128, BK: 64, WarpM: 64, WarpN: 64, Stages: 4}
	tf32Tile   = configs.TileConfig{BM: 128, BN: 128, BK: 16, WarpM: 64, WarpN: 64, Stages: 5}
)

// copied is the set of global byte addresses (one per element) the
// LDGSTS chunks of op's tile of k-step k of CTA c read, with the number of
// distinct 128-B lines each chunk touches.
func copied(c *CTA, op isa.Operand, k, stageBytes, e int) (map[uint64]bool, []int) {
	addrs := map[uint64]bool{}
	var lines []int
	for j := 0; j < CeilDiv(stageBytes, ChunkBytes); j++ {
		_, r := c.ChunkRegion(k, op, j)
		seen := map[uint64]bool{}
		for row := 0; row < r.Rows; row++ {
			for b := 0; b < r.RowBytes; b += e {
				a := r.Base + uint64(row)*r.Pitch + uint64(b)
				addrs[a] = true
				seen[a/128] = true
			}
		}
		lines = append(lines, len(seen))
	}
	return addrs, lines
}

// The copy pattern: every layout's LDGSTS chunks of a k-step copy exactly
// the elements of the operand's tile at the addresses of its global
// layout (row-major: row x columns + column; column-major: column x rows
// + row), and an operand whose tile rows run along M or N (256 B at
// BM = BN = 128 of fp16) touches fewer lines per 512-byte copy than a
// K-major one whose rows are BK x 2 = 64 B (half a line): 4 against 8.
func TestLayoutCopyPattern(t *testing.T) {
	const M, N, K, e = 512, 384, 256, 2
	for _, c := range []struct {
		lay            string
		sparse         bool
		tile           configs.TileConfig
		linesA, linesB int
	}{
		{"tn", false, denseTile, 8, 8}, {"nn", false, denseTile, 4, 8},
		{"nt", false, denseTile, 4, 4}, {"tt", false, denseTile, 8, 4},
		{"tn", true, sparseTile, 8, 4}, {"nn", true, sparseTile, 4, 4},
	} {
		p := layoutPlan(t, c.lay, c.sparse, tensorcore.FP16, M, N, K, c.tile)
		cta := NewCTA(p, 5)
		const step = 1
		keptK := K * p.Pattern.N / p.Pattern.M
		keptBK := p.Tile.BK * p.Pattern.N / p.Pattern.M
		for _, o := range []struct {
			op       isa.Operand
			base     uint64
			outer    int // M or N
			rows0    int // first outer index of the tile
			kDim, bk int
			kMajor   bool
			bytes    int
			lines    int
		}{
			{isa.OperandA, baseA, M, cta.TileM * p.Tile.BM, keptK, keptBK,
				c.lay[0] == 't', p.AStageB, c.linesA},
			{isa.OperandB, baseB, N, cta.TileN * p.Tile.BN, K, p.Tile.BK,
				c.lay[1] == 'n', p.BStageB, c.linesB},
		} {
			got, lines := copied(&cta, o.op, step, o.bytes, e)
			want := map[uint64]bool{}
			tileRows := p.Tile.BM
			if o.op == isa.OperandB {
				tileRows = p.Tile.BN
			}
			for r := o.rows0; r < o.rows0+tileRows; r++ {
				for kk := step * o.bk; kk < (step+1)*o.bk; kk++ {
					idx := r*o.kDim + kk // row-major over K
					if !o.kMajor {
						idx = kk*o.outer + r
					}
					want[o.base+uint64(idx*e)] = true
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s sparse=%v op %d: %d elements copied, want %d", c.lay, c.sparse, o.op, len(got), len(want))
			}
			for a := range want {
				if !got[a] {
					t.Errorf("%s sparse=%v op %d: element at %#x not copied", c.lay, c.sparse, o.op, a)
					break
				}
			}
			for j, n := range lines {
				if n != o.lines {
					t.Errorf("%s sparse=%v op %d: chunk %d touches %d lines, want %d", c.lay, c.sparse, o.op, j, n, o.lines)
					break
				}
			}
		}
	}
}

// conflictDegree is the bank-conflict degree of 8 threads each reading
// 16 B at the same column of 8 consecutive rows pitch bytes apart, with
// 32 banks of 4 B and no permutation: the rows fall on 128/gcd(pitch,128)
// distinct positions of the 128-B bank row (at most 8), and the 8 reads
// spread evenly over them.
func conflictDegree(pitch int) int {
	return 8 / min(8, 128/gcd(pitch, 128))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// unswizzled is p with its operand tiles laid out without CUTLASS's
// permutation (rows end to end) and its fragment patterns derived again.
func unswizzled(p *Plan, cfg memory.SharedMemoryConfig) *Plan {
	q := *p
	q.layoutA, q.layoutB = p.layoutA.Unswizzled(), p.layoutB.Unswizzled()
	q.fragmentPatterns(cfg)
	return &q
}

// The bank conflicts: with CUTLASS's layouts (crosswise for a K-major
// tile, congruous for an M- or N-major one) every 8x8 matrix of every
// layout's fragment loads is conflict-free, one wavefront; turn the
// permutation off and the layouts part: a trans load reads 8 K rows of
// BM x 2 = 256 B, all in the same banks (8-way), where the K-major load
// reads 8 rows of BK x 2 = 64 B (4-way). The swizzle is what makes nn and
// tn load their fragments at the same cost.
func TestLayoutBankConflicts(t *testing.T) {
	ld, _ := configs.Load(nil, nil)
	cfg := ld.Config.Memory.SharedMemory
	for _, lay := range []string{"tn", "nt", "nn", "tt"} {
		p := layoutPlan(t, lay, false, tensorcore.FP16, 512, 512, 512, denseTile)
		for _, f := range []struct {
			name string
			pat  smem.Pattern
		}{{"A", p.LDSMA}, {"B", p.LDSMB}} {
			mats := f.pat.BytesPerInstr / 128
			if f.pat.Wavefronts != mats {
				t.Errorf("%s %s swizzled: %d wavefronts for %d matrices, want conflict-free", lay, f.name, f.pat.Wavefronts, mats)
			}
		}
		q := unswizzled(p, cfg)
		for _, f := range []struct {
			name   string
			pat    smem.Pattern
			kMajor bool
			outer  int
		}{{"A", q.LDSMA, lay[0] == 't', p.Tile.BM}, {"B", q.LDSMB, lay[1] == 'n', p.Tile.BN}} {
			pitch := p.Tile.BK * 2
			if !f.kMajor {
				pitch = f.outer * 2
			}
			mats := f.pat.BytesPerInstr / 128
			if want := mats * conflictDegree(pitch); f.pat.Wavefronts != want {
				t.Errorf("%s %s unswizzled: %d wavefronts, want %d (%d matrices, rows of %d B)",
					lay, f.name, f.pat.Wavefronts, want, mats, pitch)
			}
		}
	}
}

// The fragment loads: an operand whose tile runs along M or N loads with
// ldmatrix.trans (LDSM with Trans), a K-major one without; the trans
// load moves the same bytes in the same number of LDSM.x4. A TF32 operand
// along M or N, which ldmatrix cannot transpose, loads with LDS.32: the
// same bytes in four times the instructions.
func TestLayoutFragmentLoads(t *testing.T) {
	count := func(p *Plan, op isa.Operand) (ldsm, lds, bytes int, trans bool) {
		for _, in := range p.Program(0).Body {
			if in.Operand != op || (in.Op != isa.OpLDSM && in.Op != isa.OpLDS) {
				continue
			}
			if in.Op == isa.OpLDSM {
				ldsm++
			} else {
				lds++
			}
			bytes += int(in.Bytes)
			trans = trans || in.Trans
		}
		return
	}
	for _, prec := range []tensorcore.Precision{tensorcore.FP16, tensorcore.TF32} {
		tile := denseTile
		if prec == tensorcore.TF32 {
			tile = tf32Tile
		}
		base := layoutPlan(t, "tn", false, prec, 512, 512, 512, tile)
		for _, lay := range []string{"tn", "nt", "nn", "tt"} {
			p := layoutPlan(t, lay, false, prec, 512, 512, 512, tile)
			for i, op := range []isa.Operand{isa.OperandA, isa.OperandB} {
				wantTrans := (i == 0 && lay[0] == 'n') || (i == 1 && lay[1] == 't')
				ldsm, lds, bytes, trans := count(p, op)
				b0, _, bb, _ := count(base, op)
				if trans != wantTrans {
					t.Errorf("%s %s op %d: trans %v, want %v", prec, lay, op, trans, wantTrans)
				}
				if bytes != bb {
					t.Errorf("%s %s op %d: %d B of fragments per k-step, tn loads %d", prec, lay, op, bytes, bb)
				}
				switch {
				case wantTrans && prec == tensorcore.TF32:
					if ldsm != 0 || lds != 4*b0 {
						t.Errorf("%s %s op %d: %d LDSM and %d LDS.32, want 0 and %d", prec, lay, op, ldsm, lds, 4*b0)
					}
				case ldsm != b0 || lds != 0:
					t.Errorf("%s %s op %d: %d LDSM and %d LDS, want %d and 0", prec, lay, op, ldsm, lds, b0)
				}
			}
		}
	}
}
