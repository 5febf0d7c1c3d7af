package tensorcore

import (
	"fmt"
	"math"
	"sort"
)

// A transposable N:M mask keeps at most N of every M consecutive values
// along the rows and along the columns, so that the matrix and its
// transpose are both N:M along K: a weight W pruned this way runs sparse
// in the forward GEMM (W along its input dimension) and in the data
// gradient (W^T along its output dimension). It is chosen block by
// block: every M x M block keeps N per row and per column. For M <= 4 the
// block's mask is the best of all such masks (exhaustive: 90 for 2:4,
// the search TSENOR's and Bi-Mask's papers solve approximately for wider
// blocks); for wider groups, a greedy pass that takes the largest |w|
// whose row and column still have room.

// maxExhaustiveGroup is the widest block searched exhaustively.
const maxExhaustiveGroup = 4

// PruneTransposable returns m pruned to a transposable n:group mask by
// magnitude. Rows and Cols must be multiples of group.
func PruneTransposable(m Matrix, n, group int) (Matrix, error) {
	if err := (Pattern{N: n, M: group}).Check(); err != nil {
		return Matrix{}, err
	}
	if m.Rows%group != 0 || m.Cols%group != 0 {
		return Matrix{}, fmt.Errorf("transposable %d:%d mask: %d x %d is not a whole "+
			"number of %d x %d blocks", n, group, m.Rows, m.Cols, group, group)
	}
	out := NewMatrix(m.Rows, m.Cols)
	var masks [][]int
	if group <= maxExhaustiveGroup {
		masks = blockMasks(n, group)
	}
	abs := make([]float64, group*group)
	for r0 := 0; r0 < m.Rows; r0 += group {
		for c0 := 0; c0 < m.Cols; c0 += group {
			for i := range abs {
				abs[i] = math.Abs(float64(m.At(r0+i/group, c0+i%group)))
			}
			var keep []int
			if masks != nil {
				keep = bestMask(masks, abs)
			} else {
				keep = greedyMask(abs, n, group)
			}
			for _, i := range keep {
				r, c := r0+i/group, c0+i%group
				out.Set(r, c, m.At(r, c))
			}
		}
	}
	return out, nil
}

// CheckTransposable reports whether m is n:group sparse along its rows
// and along its columns, naming the first group that is not.
func CheckTransposable(m Matrix, n, group int) error {
	p := Pattern{N: n, M: group}
	if err := CheckPattern(m, p); err != nil {
		return fmt.Errorf("along K: %w", err)
	}
	if err := CheckPattern(transpose(m), p); err != nil {
		return fmt.Errorf("along M (the transpose's K): %w", err)
	}
	return nil
}

// blockMasks lists every group x group 0/1 block with n ones per row and
// per column, as the kept positions (row-major index), in lexicographic
// order of the rows' choices.
func blockMasks(n, group int) [][]int {
	var rows [][]int // every n-subset of a row
	var pick func(start int, cur []int)
	pick = func(start int, cur []int) {
		if len(cur) == n {
			rows = append(rows, append([]int(nil), cur...))
			return
		}
		for c := start; c < group; c++ {
			pick(c+1, append(cur, c))
		}
	}
	pick(0, nil)
	var out [][]int
	cols := make([]int, group)
	var place func(r int, cur []int)
	place = func(r int, cur []int) {
		if r == group {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for _, choice := range rows {
			ok := true
			for _, c := range choice {
				ok = ok && cols[c] < n
			}
			if !ok {
				continue
			}
			next := cur
			for _, c := range choice {
				cols[c]++
				next = append(next, r*group+c)
			}
			place(r+1, next)
			for _, c := range choice {
				cols[c]--
			}
		}
	}
	place(0, nil)
	return out
}

// bestMask is the mask keeping the most magnitude (the first of equals).
func bestMask(masks [][]int, abs []float64) []int {
	best, bestSum := 0, -1.0
	for i, mk := range masks {
		s := 0.0
		for _, j := range mk {
			s += abs[j]
		}
		if s > bestSum {
			best, bestSum = i, s
		}
	}
	return masks[best]
}

// greedyMask takes positions by decreasing |w| (lower index first among
// equals) while their row and column keep fewer than n.
func greedyMask(abs []float64, n, group int) []int {
	idx := make([]int, len(abs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return abs[idx[a]] > abs[idx[b]] })
	rows, cols := make([]int, group), make([]int, group)
	var keep []int
	for _, i := range idx {
		r, c := i/group, i%group
		if rows[r] < n && cols[c] < n {
			rows[r]++
			cols[c]++
			keep = append(keep, i)
		}
	}
	return keep
}
