package tensorcore

import (
	"math"
	"math/rand"
	"testing"
)

// The number of 4 x 4 0/1 matrices with two ones in every row and column
// is 90 (OEIS A001499: 1, 6, 90, 2040, ...); of 2 x 2 with one, 2; of
// 4 x 4 with one (permutation matrices), 24.
func TestBlockMasksCount(t *testing.T) {
	for _, c := range []struct{ n, m, want int }{{2, 4, 90}, {1, 2, 2}, {1, 4, 24}, {1, 3, 6}, {2, 3, 6}} {
		if got := len(blockMasks(c.n, c.m)); got != c.want {
			t.Errorf("%d:%d: %d masks, want %d", c.n, c.m, got, c.want)
		}
	}
}

func randomMatrix(rows, cols int, seed int64) Matrix {
	rng := rand.New(rand.NewSource(seed))
	m := NewMatrix(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

func absSum(m Matrix) float64 {
	s := 0.0
	for _, v := range m.Data {
		s += math.Abs(float64(v))
	}
	return s
}

// Properties of the transposable mask: valid both ways; never more
// magnitude than the plain row-wise mask (a transposable mask is one of
// the plain masks); the exhaustive 2:4 search keeps at least what the
// greedy one does, block by block, so in total; and for 2:4 it keeps
// exactly 2 per row and column (8 of 16 per block).
func TestPruneTransposableProperties(t *testing.T) {
	w := randomMatrix(64, 128, 7)
	p := Pattern{N: 2, M: 4}
	tr, err := PruneTransposable(w, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckTransposable(tr, 2, 4); err != nil {
		t.Fatal(err)
	}
	plain := PruneMagnitude(w, p)
	if err := CheckTransposable(plain, 2, 4); err == nil {
		t.Error("the plain mask of random weights is transposable: the test shows nothing")
	}
	kt, kp := absSum(tr), absSum(plain)
	if kt > kp+1e-9 || kt <= 0 {
		t.Errorf("transposable kept %.3f, plain %.3f: want 0 < transposable <= plain", kt, kp)
	}
	nz := 0
	for _, v := range tr.Data {
		if v != 0 {
			nz++
		}
	}
	if nz != len(w.Data)/2 {
		t.Errorf("%d nonzeros, want half of %d", nz, len(w.Data))
	}
	greedy := NewMatrix(w.Rows, w.Cols)
	abs := make([]float64, 16)
	for r0 := 0; r0 < w.Rows; r0 += 4 {
		for c0 := 0; c0 < w.Cols; c0 += 4 {
			for i := range abs {
				abs[i] = math.Abs(float64(w.At(r0+i/4, c0+i%4)))
			}
			for _, i := range greedyMask(abs, 2, 4) {
				greedy.Set(r0+i/4, c0+i%4, w.At(r0+i/4, c0+i%4))
			}
		}
	}
	if err := CheckTransposable(greedy, 2, 4); err != nil {
		t.Fatal(err)
	}
	if kg := absSum(greedy); kg > kt+1e-9 {
		t.Errorf("greedy kept %.3f > exhaustive %.3f", kg, kt)
	}
}

// A block whose best transposable mask is known by hand: the diagonal
// band of large values (rows keep columns {0,1},{1,2},{2,3},{3,0}).
func TestPruneTransposableKnownBlock(t *testing.T) {
	w := NewMatrix(4, 4)
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			w.Set(r, c, 0.1)
		}
		w.Set(r, r, 10)
		w.Set(r, (r+1)%4, 5)
	}
	got, err := PruneTransposable(w, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			keep := c == r || c == (r+1)%4
			if (got.At(r, c) != 0) != keep {
				t.Fatalf("row %d col %d kept=%v, want %v:\n%v", r, c, got.At(r, c) != 0, keep, got.Data)
			}
		}
	}
}

func TestPruneTransposableRefusesPartialBlocks(t *testing.T) {
	if _, err := PruneTransposable(NewMatrix(6, 8), 2, 4); err == nil {
		t.Error("6 rows accepted for 4 x 4 blocks")
	}
	if _, err := PruneTransposable(NewMatrix(8, 8), 4, 4); err == nil {
		t.Error("4:4 accepted")
	}
}

// Wider groups take the greedy path; the mask is still valid both ways.
func TestPruneTransposableGreedyWide(t *testing.T) {
	w := randomMatrix(16, 16, 3)
	got, err := PruneTransposable(w, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckTransposable(got, 2, 8); err != nil {
		t.Fatal(err)
	}
}
