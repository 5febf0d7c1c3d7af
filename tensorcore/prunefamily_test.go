package tensorcore

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

func keptAbs(m Matrix) float64 {
	s := 0.0
	for _, v := range m.Data {
		s += math.Abs(float64(v))
	}
	return s
}

// Every family's pruned matrix holds the family's pattern (its own check)
// and keeps exactly the family's share of a matrix with no zeros.
func TestPrunePatternFamilies(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	m := randomDense(rng, 64, 128, FP16)
	for i, v := range m.Data {
		if v == 0 {
			m.Data[i] = 1
		}
	}
	for _, s := range []string{"2:4", "2:8", "32:2:8", "16:2:16", "64:2:32", "2:4/2:4", "1:2/2:8"} {
		p, _ := ParsePattern(s)
		out, err := PrunePattern(m, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPattern(out, p); err != nil {
			t.Errorf("%s: pruned matrix fails its own check: %v", s, err)
		}
		nz := 0
		for _, v := range out.Data {
			if v != 0 {
				nz++
			}
		}
		if want := m.Rows * p.Kept(m.Cols); nz != want {
			t.Errorf("%s: %d nonzeros kept, want %d", s, nz, want)
		}
	}
}

// Hierarchical pruning keeps the most magnitude any 2:4/2:4 mask can: one
// row of 16 against every valid mask (6 block pairs x 6 x 6 inner pairs).
func TestPruneHierarchicalIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	p, _ := ParsePattern("2:4/2:4")
	pairs := [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	for range 50 {
		m := randomDense(rng, 1, 16, FP16)
		out, err := PrunePattern(m, p)
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for _, bl := range pairs {
			for _, a := range pairs {
				for _, b := range pairs {
					s := 0.0
					for k, blk := range bl {
						in := [2][2]int{a, b}[k]
						for _, c := range in {
							s += math.Abs(float64(m.Data[blk*4+c]))
						}
					}
					best = math.Max(best, s)
				}
			}
		}
		if got := keptAbs(out); math.Abs(got-best) > 1e-9*best {
			t.Fatalf("kept |w| %g, the best 2:4/2:4 mask keeps %g", got, best)
		}
	}
}

// V:N:M pruning picks, per V-row block and group, the columns of the
// largest block magnitude: with one dominant column set planted, it keeps
// those columns, the same in every row of the block.
func TestPruneVectorWiseColumns(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	p, _ := ParsePattern("16:2:8")
	m := randomDense(rng, 32, 16, FP16)
	planted := [2][4]int{{1, 3, 4, 6}, {0, 2, 5, 7}} // per V block, in group 0
	for r := range 32 {
		for _, c := range planted[r/16] {
			m.Data[r*16+c] = 100 + float32(c)
		}
	}
	out, err := PrunePattern(m, p)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 32 {
		for c := range 8 {
			if out.Data[r*16+c] == 0 {
				continue
			}
			in := false
			for _, k := range planted[r/16] {
				in = in || k == c
			}
			if !in {
				t.Errorf("row %d keeps column %d, outside its block's columns %v", r, c, planted[r/16])
			}
		}
	}
}

// The checks name the rule a mask breaks; transposable masks are checked
// along columns too, and not pruned here.
func TestCheckPatternFamiliesMasks(t *testing.T) {
	m := NewMatrix(4, 16)
	for r := range 4 { // every row 2:8, but the block uses 8 columns of group 0
		m.Data[r*16+2*r] = 1
		m.Data[r*16+2*r+1] = 1
	}
	p, _ := ParsePattern("16:2:8")
	if err := CheckPattern(m, p); err == nil || !strings.Contains(err.Error(), "use 8 columns") {
		t.Errorf("16:2:8: %v", err)
	}
	h, _ := ParsePattern("1:2/2:4")
	two := NewMatrix(1, 8) // one value in each of the group's 2 blocks
	two.Data[0], two.Data[4] = 1, 1
	if err := CheckPattern(two, h); err == nil || !strings.Contains(err.Error(), "blocks with nonzeros") {
		t.Errorf("1:2/2:4: %v", err)
	}
	col := NewMatrix(4, 4) // rows 2:4, column 0 full
	for r := range 4 {
		col.Data[r*4] = 1
	}
	tr, _ := ParsePattern("2:4T")
	if err := CheckPattern(col, tr); err == nil || !strings.Contains(err.Error(), "column 0") {
		t.Errorf("2:4T: %v", err)
	}
	if _, err := PrunePattern(col, tr); err == nil {
		t.Error("2:4T pruned by the magnitude pruner")
	}
}
