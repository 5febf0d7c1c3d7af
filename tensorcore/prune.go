package tensorcore

import (
	"fmt"
	"math"
)

// PruneMagnitude keeps the p.N largest |w| of every p.M-wide chunk of each
// row (along K, the columns) and zeroes the rest. Ties go to the lower
// index, so the result is deterministic. A trailing chunk narrower than
// p.M (when Cols is not a multiple of p.M) keeps at most p.N values too.
func PruneMagnitude(m Matrix, p Pattern) Matrix {
	out := NewMatrix(m.Rows, m.Cols)
	keep := make([]int, 0, p.N)
	for r := 0; r < m.Rows; r++ {
		row := m.Data[r*m.Cols : (r+1)*m.Cols]
		for c0 := 0; c0 < m.Cols; c0 += p.M {
			chunk := row[c0:min(c0+p.M, m.Cols)]
			for _, i := range largest(chunk, p.N, keep[:0]) {
				out.Data[r*m.Cols+c0+i] = chunk[i]
			}
		}
	}
	return out
}

// largest returns the indices of the n largest |v| (ties: lower index).
func largest(v []float32, n int, idx []int) []int {
	taken := uint64(0)
	for len(idx) < n && len(idx) < len(v) {
		best := -1
		for i, x := range v {
			if taken&(1<<i) != 0 {
				continue
			}
			if best < 0 || math.Abs(float64(x)) > math.Abs(float64(v[best])) {
				best = i
			}
		}
		taken |= 1 << best
		idx = append(idx, best)
	}
	return idx
}

// CheckPattern returns an error naming the first row and column group
// that hold more than p.N nonzeros in a p.M-wide chunk, or a shape error.
func CheckPattern(m Matrix, p Pattern) error {
	if err := p.Check(); err != nil {
		return err
	}
	if err := m.check("A"); err != nil {
		return err
	}
	for r := 0; r < m.Rows; r++ {
		for c0 := 0; c0 < m.Cols; c0 += p.M {
			end := min(c0+p.M, m.Cols)
			nz := 0
			for c := c0; c < end; c++ {
				if m.Data[r*m.Cols+c] != 0 {
					nz++
				}
			}
			if nz > p.N {
				return fmt.Errorf("not %s sparse: row %d, column group %d "+
					"(columns %d-%d) has %d nonzeros, at most %d allowed",
					p, r, c0/p.M, c0, end-1, nz, p.N)
			}
		}
	}
	return nil
}

// Pairwise48 is the INT4 pattern: in every 8-wide chunk, 4 values survive
// as 2 aligned pairs (zeros come in 2-element sub-chunks). It is 2:4
// sparsity over element pairs.
var Pairwise48 = Pattern{N: 4, M: 8}

// PrunePairwise applies the pair-wise 4:8 pattern of int4: of the four
// aligned pairs of every 8-wide chunk, keep the two with the largest
// |w0|+|w1| (ties: lower pair index).
func PrunePairwise(m Matrix) Matrix {
	out := NewMatrix(m.Rows, m.Cols)
	var sums []float32
	keep := make([]int, 0, 2)
	for r := 0; r < m.Rows; r++ {
		row := m.Data[r*m.Cols : (r+1)*m.Cols]
		for c0 := 0; c0 < m.Cols; c0 += 8 {
			sums = sums[:0]
			end := min(c0+8, m.Cols)
			for c := c0; c < end; c += 2 {
				s := float32(math.Abs(float64(row[c])))
				if c+1 < end {
					s += float32(math.Abs(float64(row[c+1])))
				}
				sums = append(sums, s)
			}
			for _, pi := range largest(sums, 2, keep[:0]) {
				for c := c0 + 2*pi; c < min(c0+2*pi+2, end); c++ {
					out.Data[r*m.Cols+c] = row[c]
				}
			}
		}
	}
	return out
}

// CheckPairwise returns an error naming the first row and column group
// that break the pair-wise 4:8 pattern (more than two aligned pairs of an
// 8-wide chunk hold a nonzero).
func CheckPairwise(m Matrix) error {
	if err := m.check("A"); err != nil {
		return err
	}
	for r := 0; r < m.Rows; r++ {
		for c0 := 0; c0 < m.Cols; c0 += 8 {
			end := min(c0+8, m.Cols)
			pairs := 0
			for c := c0; c < end; c += 2 {
				if m.Data[r*m.Cols+c] != 0 || (c+1 < end && m.Data[r*m.Cols+c+1] != 0) {
					pairs++
				}
			}
			if pairs > 2 {
				return fmt.Errorf("not pair-wise 4:8 sparse: row %d, column "+
					"group %d (columns %d-%d) has %d nonzero pairs, at most 2 allowed",
					r, c0/8, c0, end-1, pairs)
			}
		}
	}
	return nil
}
