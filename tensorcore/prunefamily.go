package tensorcore

import (
	"fmt"
	"math"
	"sort"
)

// PrunePattern prunes m (rows x K) to pattern p by magnitude, each family
// by its own rule:
//
//   - N:M: the N largest |w| of every M (PruneMagnitude);
//   - V:N:M: per block of V rows and group of M columns, the 4 columns of
//     the largest sum of |w| over the block's rows (VENOM's vector-wise
//     magnitude criterion), then in each row the 2 largest |w| of those 4;
//   - hierarchical N1:M1/N2:M2: in each block the N2 largest |w|, then
//     the N1 blocks of every M1 whose kept |w| sum largest (which keeps the
//     most magnitude any mask of the pattern can: the blocks are
//     independent).
//
// Ties go to the lower index. A transposable mask is not this pruner's
// (its rows and columns constrain each other): that is an error.
func PrunePattern(m Matrix, p Pattern) (Matrix, error) {
	if err := p.Check(); err != nil {
		return Matrix{}, err
	}
	switch {
	case p.Transposable:
		return Matrix{}, fmt.Errorf("pattern %s: a transposable mask (N:M along rows and "+
			"columns at once) is not pruned by the magnitude pruner", p)
	case p.Family() == FamilyVNM:
		return pruneVectorWise(m, p), nil
	case p.Family() == FamilyHierarchical:
		return pruneHierarchical(m, p), nil
	}
	return PruneMagnitude(m, p), nil
}

// topByScore is the indices of the n largest scores, in ascending index
// order (ties: lower index).
func topByScore(score []float64, n int) []int {
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	idx = idx[:min(n, len(idx))]
	sort.Ints(idx)
	return idx
}

func pruneVectorWise(m Matrix, p Pattern) Matrix {
	out := NewMatrix(m.Rows, m.Cols)
	score := make([]float64, p.M)
	for b0 := 0; b0 < m.Rows; b0 += p.V {
		rows := min(p.V, m.Rows-b0)
		for g0 := 0; g0 < m.Cols; g0 += p.M {
			width := min(p.M, m.Cols-g0)
			for c := range width {
				score[c] = 0
				for r := range rows {
					score[c] += math.Abs(float64(m.Data[(b0+r)*m.Cols+g0+c]))
				}
			}
			cols := topByScore(score[:width], gatherWidth)
			vals := make([]float64, len(cols))
			for r := range rows {
				row := (b0 + r) * m.Cols
				for i, c := range cols {
					vals[i] = math.Abs(float64(m.Data[row+g0+c]))
				}
				for _, i := range topByScore(vals, p.N) {
					out.Data[row+g0+cols[i]] = m.Data[row+g0+cols[i]]
				}
			}
		}
	}
	return out
}

func pruneHierarchical(m Matrix, p Pattern) Matrix {
	out := NewMatrix(m.Rows, m.Cols)
	group := p.Group()
	for r := 0; r < m.Rows; r++ {
		row := m.Data[r*m.Cols : (r+1)*m.Cols]
		for g0 := 0; g0 < m.Cols; g0 += group {
			blocks := (min(group, m.Cols-g0) + p.InM - 1) / p.InM
			kept := make([][]int, blocks)
			score := make([]float64, blocks)
			for b := range blocks {
				c0 := g0 + b*p.InM
				chunk := row[c0:min(c0+p.InM, m.Cols)]
				kept[b] = largest(chunk, p.InN, nil)
				for _, i := range kept[b] {
					score[b] += math.Abs(float64(chunk[i]))
				}
			}
			for _, b := range topByScore(score, p.N) {
				for _, i := range kept[b] {
					c := g0 + b*p.InM + i
					out.Data[r*m.Cols+c] = row[c]
				}
			}
		}
	}
	return out
}

// checkFamily is CheckPattern for the families beyond N:M rows: V:N:M
// (at most 2 nonzeros a row in a group, at most 4 columns used by a V
// block in a group), hierarchical (at most N1 blocks with a nonzero in a
// group, at most N2 nonzeros in a block) and the columns of a
// transposable N:M (at most N nonzeros in a column of an M-row block).
func checkFamily(m Matrix, p Pattern) error {
	switch {
	case p.Family() == FamilyVNM:
		return checkVectorWise(m, p)
	case p.Family() == FamilyHierarchical:
		return checkHierarchical(m, p)
	case p.Transposable:
		for r0 := 0; r0 < m.Rows; r0 += p.M {
			for c := 0; c < m.Cols; c++ {
				nz := 0
				for r := r0; r < min(r0+p.M, m.Rows); r++ {
					if m.Data[r*m.Cols+c] != 0 {
						nz++
					}
				}
				if nz > p.N {
					return fmt.Errorf("not %s sparse: column %d, rows %d-%d have %d nonzeros, at most %d allowed",
						p, c, r0, min(r0+p.M, m.Rows)-1, nz, p.N)
				}
			}
		}
	}
	return nil
}

func checkVectorWise(m Matrix, p Pattern) error {
	for b0 := 0; b0 < m.Rows; b0 += p.V {
		for g0 := 0; g0 < m.Cols; g0 += p.M {
			used := map[int]bool{}
			for r := b0; r < min(b0+p.V, m.Rows); r++ {
				nz := 0
				for c := g0; c < min(g0+p.M, m.Cols); c++ {
					if m.Data[r*m.Cols+c] != 0 {
						nz++
						used[c] = true
					}
				}
				if nz > p.N {
					return fmt.Errorf("not %s sparse: row %d, column group %d has %d nonzeros, at most %d allowed",
						p, r, g0/p.M, nz, p.N)
				}
			}
			if len(used) > gatherWidth {
				return fmt.Errorf("not %s sparse: rows %d-%d use %d columns of column group %d, at most %d allowed",
					p, b0, min(b0+p.V, m.Rows)-1, len(used), g0/p.M, gatherWidth)
			}
		}
	}
	return nil
}

func checkHierarchical(m Matrix, p Pattern) error {
	group := p.Group()
	for r := 0; r < m.Rows; r++ {
		for g0 := 0; g0 < m.Cols; g0 += group {
			blocks := 0
			for c0 := g0; c0 < min(g0+group, m.Cols); c0 += p.InM {
				nz := 0
				for c := c0; c < min(c0+p.InM, m.Cols); c++ {
					if m.Data[r*m.Cols+c] != 0 {
						nz++
					}
				}
				if nz > p.InN {
					return fmt.Errorf("not %s sparse: row %d, block at columns %d-%d has %d nonzeros, at most %d allowed",
						p, r, c0, min(c0+p.InM, m.Cols)-1, nz, p.InN)
				}
				if nz > 0 {
					blocks++
				}
			}
			if blocks > p.N {
				return fmt.Errorf("not %s sparse: row %d, group %d has %d blocks with nonzeros, at most %d allowed",
					p, r, g0/group, blocks, p.N)
			}
		}
	}
	return nil
}
