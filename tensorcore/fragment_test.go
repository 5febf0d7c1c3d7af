package tensorcore

import (
	"math/rand"
	"strings"
	"testing"
)

var sparseShapes = []struct {
	prec Precision
	k    int
	regs int // A registers per lane (PTX ISA)
	meta int // metadata lanes per quad
}{
	{FP16, 16, 2, 1}, {FP16, 32, 4, 2}, {BF16, 16, 2, 1}, {BF16, 32, 4, 2},
	{TF32, 8, 2, 1}, {TF32, 16, 4, 2}, {INT8, 32, 2, 2}, {INT8, 64, 4, 4},
}

func TestSparseLayoutRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, s := range sparseShapes {
		sh := Shape{16, 8, s.k}
		l, err := SparseLayoutFor(s.prec, sh)
		if err != nil {
			t.Fatal(err)
		}
		if l.RegsA != s.regs || l.MetaThreads != s.meta {
			t.Errorf("%s %s: %d regs %d meta lanes, want %d and %d", s.prec, sh,
				l.RegsA, l.MetaThreads, s.regs, s.meta)
		}
		a := randomSparse(rng, 16, s.k, l.Pattern, s.prec)
		ca, _ := Compress(a, l.Pattern)
		// Every kept value lands in exactly one lane's register.
		seen := map[[2]int]bool{}
		for lane := 0; lane < 32; lane++ {
			for i := 0; i < l.RegsA*l.ElemsPerReg; i++ {
				r, c := l.AElement(lane, i)
				if seen[[2]int{r, c}] {
					t.Fatalf("%s %s: (%d,%d) held twice", s.prec, sh, r, c)
				}
				seen[[2]int{r, c}] = true
			}
		}
		if len(seen) != len(ca.Values) {
			t.Fatalf("%s %s: %d elements covered of %d", s.prec, sh, len(seen), len(ca.Values))
		}
		b := randomDense(rng, s.k, 8, s.prec)
		c := randomDense(rng, 16, 8, s.prec)
		want, err := MMA(a, b, c, s.prec)
		if err != nil {
			t.Fatal(err)
		}
		for sel := 0; sel < l.Selectors(); sel++ {
			f, err := l.Distribute(ca, sel)
			if err != nil {
				t.Fatal(err)
			}
			back, err := l.Gather(f, sel)
			if err != nil {
				t.Fatalf("%s %s sel %d: %v", s.prec, sh, sel, err)
			}
			if !equal(back.Decompress().Data, a.Data) {
				t.Fatalf("%s %s sel %d: gather differs", s.prec, sh, sel)
			}
			d, err := l.WarpMMASp(f, sel, b, c)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(d.Data, want.Data) {
				t.Fatalf("%s %s sel %d: warp mma.sp differs from dense", s.prec, sh, sel)
			}
			for lane := 0; lane < 32; lane++ {
				owner := lane%4/l.MetaThreads == sel
				if !owner && f.E[lane] != 0 {
					t.Fatalf("%s %s sel %d: lane %d holds metadata", s.prec, sh, sel, lane)
				}
			}
		}
		if _, err := l.Distribute(ca, l.Selectors()); err == nil {
			t.Errorf("%s %s: selector %d accepted", s.prec, sh, l.Selectors())
		}
	}
}

// TestF16K32MetadataLanes checks the layout the MLIR sm80 sparse-mma test
// builds by hand for m16n8k32: lane 4g+p (selector 0) holds 16 bits of row
// g's metadata half p in its low half, row g+8's in its high half.
func TestF16K32MetadataLanes(t *testing.T) {
	l, _ := SparseLayoutFor(FP16, Shape{16, 8, 32})
	a := NewMatrix(16, 32)
	for r := 0; r < 16; r++ {
		for c := 0; c < 32; c += 4 {
			// first half of each row keeps slots 0,1 (0x4); second half 2,3 (0xE)
			if c < 16 {
				a.Set(r, c, 1)
				a.Set(r, c+1, 1)
			} else {
				a.Set(r, c+2, 1)
				a.Set(r, c+3, 1)
			}
		}
	}
	ca, _ := Compress(a, l.Pattern)
	f, err := l.Distribute(ca, 0)
	if err != nil {
		t.Fatal(err)
	}
	for g := 0; g < 8; g++ {
		if f.E[4*g] != 0x44444444 || f.E[4*g+1] != 0xEEEEEEEE {
			t.Fatalf("quad %d: e = %#x, %#x", g, f.E[4*g], f.E[4*g+1])
		}
	}
	// A fragment: lane 0 element 0 is row 0 kept col 0; element 2 is row 8.
	if r, c := l.AElement(5, 2); r != 9 || c != 2 {
		t.Errorf("lane 5 a2 = (%d,%d), want (9,2)", r, c)
	}
	if r, c := l.AElement(5, 4); r != 1 || c != 10 {
		t.Errorf("lane 5 a4 = (%d,%d), want (1,10)", r, c)
	}
	// Corrupt one lane's metadata: the error names row and group.
	f.E[4] = f.E[4]&^0xF | 0x5
	_, err = l.Gather(f, 0)
	if err == nil || !strings.Contains(err.Error(), "row 1, column group 0") {
		t.Errorf("corrupt metadata: %v", err)
	}
}

func TestSparseLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		prec Precision
		sh   Shape
	}{{FP16, Shape{16, 8, 8}}, {INT8, Shape{16, 8, 16}}, {Precision(7), Shape{16, 8, 64}}, {TF32, Shape{8, 8, 8}}} {
		if _, err := SparseLayoutFor(tc.prec, tc.sh); err == nil {
			t.Errorf("%s %s accepted", tc.prec, tc.sh)
		}
	}
}
