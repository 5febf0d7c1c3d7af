package kernel

import (
	"fmt"
	"hash/fnv"
	"math/rand"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// dualSamples is how many instruction tiles the dual-side work is
// averaged over (or every tile, when the GEMM has fewer).
const dualSamples = 2048

// maskSource gives the kept positions of one N:M chunk of an operand:
// row r (of A, or column of B), chunk c along K.
type maskSource func(r, c int) []int

// DualWork sets a dual-side shape's Products (the mean, rounded up, over
// sampled instruction tiles of the pairs both masks keep) and Masks (which
// masks: the row's weight file for A where it has one, seeded synthetic
// otherwise; B, the activations, is always seeded synthetic).
func DualWork(cfg *configs.Config, g workloads.GEMM, s *Shape) error {
	prec, err := cfg.TensorCore.Get(s.Precision)
	if err != nil {
		return err
	}
	dense, err := tensorcore.ParseShape(prec.DenseShape)
	if err != nil {
		return err
	}
	inst, err := s.Pattern.DualShape(dense)
	if err != nil {
		return err
	}
	seed := int64(cfg.TensorCore.MaskSeed)
	a := syntheticMask(s.Pattern, seed, "A:"+g.Name)
	b := syntheticMask(s.Pattern, seed, "B:"+g.Name)
	s.Masks = fmt.Sprintf("A and B synthetic (mask_seed %d)", seed)
	if g.Weights != "" && g.SparseOperand != workloads.OperandActivations {
		w, err := workloads.LoadRowWeights(g)
		if err != nil {
			return err
		}
		if w.Compressed.Pattern != s.Pattern {
			return fmt.Errorf("row %s: weight file is %s, the dual-side run %s",
				g.Name, w.Compressed.Pattern, s.Pattern)
		}
		a = weightMask(w.Compressed)
		s.Masks = fmt.Sprintf("A from weights %s, B synthetic (mask_seed %d)", g.Weights, seed)
	}
	s.Products = meanProducts(s, inst, a, b, seed)
	return nil
}

// meanProducts samples instruction tiles (16 rows of A, 8 columns of B,
// one instruction's K) and returns the mean count of (row, column, k)
// where both masks keep k, rounded up (and at least 1).
func meanProducts(s *Shape, inst tensorcore.Shape, a, b maskSource, seed int64) int {
	tm, tn, tk := CeilDiv(s.M, inst.M), CeilDiv(s.N, inst.N), CeilDiv(s.K, inst.K)
	tiles := tm * tn * tk
	rng := rand.New(rand.NewSource(seed))
	n := min(tiles, dualSamples)
	chunks := inst.K / s.Pattern.M
	var total int64
	keptA := make([][]bool, inst.M)
	for i := 0; i < n; i++ {
		t := i
		if tiles > dualSamples {
			t = rng.Intn(tiles)
		}
		r0, c0, k0 := (t/(tn*tk))*inst.M, ((t/tk)%tn)*inst.N, (t%tk)*chunks
		for r := range keptA {
			keptA[r] = chunkMask(a, r0+r, k0, chunks, s.Pattern.M)
		}
		for c := 0; c < inst.N; c++ {
			kb := chunkMask(b, c0+c, k0, chunks, s.Pattern.M)
			for r := range keptA {
				for k, keep := range kb {
					if keep && keptA[r][k] {
						total++
					}
				}
			}
		}
	}
	// At least one: Request.Products 0 means "independent masks".
	return max(1, int((total+int64(n)-1)/int64(n)))
}

// chunkMask is the keep mask of chunks [c0, c0+n) of one row.
func chunkMask(m maskSource, row, c0, n, width int) []bool {
	out := make([]bool, n*width)
	for c := 0; c < n; c++ {
		for _, pos := range m(row, c0+c) {
			out[c*width+pos] = true
		}
	}
	return out
}

// syntheticMask keeps N of every M positions, drawn uniformly and
// deterministically from (seed, operand and layer, row, chunk): a partial
// Fisher-Yates shuffle driven by a SplitMix64 hash of the four.
func syntheticMask(p tensorcore.Pattern, seed int64, what string) maskSource {
	h := fnv.New64a()
	h.Write([]byte(what))
	base := h.Sum64() ^ uint64(seed)*0x9e3779b97f4a7c15
	pos := make([]int, p.M)
	return func(r, c int) []int {
		x := splitMix(base ^ splitMix(uint64(r)<<32|uint64(uint32(c))))
		for i := range pos {
			pos[i] = i
		}
		for i := 0; i < p.N; i++ {
			j := i + int(x%uint64(p.M-i))
			pos[i], pos[j] = pos[j], pos[i]
			x = splitMix(x)
		}
		return pos[:p.N]
	}
}

func splitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// weightMask reads kept positions from a compressed weight (rows beyond it
// or chunks beyond K, the padding, keep the lowest positions, as Compress
// pads an empty chunk).
func weightMask(c *tensorcore.Compressed) maskSource {
	p := c.Pattern
	chunks := c.Cols / p.M
	return func(r, ch int) []int {
		out := make([]int, p.N)
		for i := range out {
			out[i] = i
			if r < c.Rows && ch < chunks {
				out[i] = int(c.Indices[r*c.KeptCols()+ch*p.N+i])
			}
		}
		return out
	}
}
