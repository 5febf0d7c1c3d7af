package tensorcore

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

func TestRoundTo(t *testing.T) {
	p2 := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	tests := []struct {
		prec Precision
		in   float32
		want float32
	}{
		{FP16, 1 + p2(-11), 1},                     // tie -> even
		{FP16, 1 + 3*p2(-11), 1 + p2(-9)},          // tie -> even (up)
		{FP16, 65519, 65504},                       // rounds down to max
		{FP16, 65520, float32(math.Inf(1))},        // overflows
		{FP16, p2(-25), 0},                         // half the smallest subnormal, tie -> 0
		{FP16, 3 * p2(-25), p2(-23)},               // subnormal tie -> even
		{FP16, -0.1, -0.0999755859375},             // nearest fp16
		{BF16, 1 + p2(-8), 1},                      // tie -> even
		{BF16, 1 + 3*p2(-8), 1 + p2(-6)},           // tie -> even (up)
		{BF16, 3.14159, 3.140625},                  // nearest bf16
		{TF32, 1 + p2(-11), 1},                     // tf32 keeps 10 mantissa bits
		{TF32, 1e30, float32(RoundTo(1e30, TF32))}, // stays finite
		{INT8, 200, 127},
		{INT8, -300, -128},
		{INT8, -2.5, -2},
		{INT8, 3.5, 4},
	}
	for _, tc := range tests {
		if got := RoundTo(tc.in, tc.prec); got != tc.want {
			t.Errorf("RoundTo(%g, %s) = %g, want %g", tc.in, tc.prec, got, tc.want)
		}
		if !Representable(RoundTo(tc.in, tc.prec), tc.prec) {
			t.Errorf("RoundTo(%g, %s) not representable", tc.in, tc.prec)
		}
	}
	if math.IsInf(float64(RoundTo(1e30, TF32)), 0) {
		t.Errorf("tf32 1e30 overflowed")
	}
}

// TestRepresentableMatchesRoundTo compares the bit test with rounding on
// random float32 bit patterns and on values near each format's edges.
func TestRepresentableMatchesRoundTo(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var xs []float32
	for i := 0; i < 200000; i++ {
		xs = append(xs, math.Float32frombits(rng.Uint32()))
	}
	for e := -30; e <= 20; e++ {
		for m := 0; m < 64; m++ {
			xs = append(xs, float32(math.Ldexp(1+float64(m)/1024, e)), float32(math.Ldexp(float64(m), e)))
		}
	}
	xs = append(xs, 65504, 65505, 65536, -128, 127, 127.5, 128, 0.5)
	for _, prec := range Precisions {
		for _, x := range xs {
			if math.IsNaN(float64(x)) {
				continue
			}
			if got, want := Representable(x, prec), RoundTo(x, prec) == x; got != want {
				t.Fatalf("%s: Representable(%g) = %v, RoundTo says %v", prec, x, got, want)
			}
		}
	}
}

func mat(rows, cols int, v ...float32) Matrix { return Matrix{Rows: rows, Cols: cols, Data: v} }

func TestPruneMagnitude(t *testing.T) {
	tests := []struct {
		name string
		in   Matrix
		p    Pattern
		want []float32
	}{
		{"2:4 keeps largest |w|", mat(1, 4, 1, -3, 2, 0.5), Pattern{N: 2, M: 4}, []float32{0, -3, 2, 0}},
		{"ties to lower index", mat(1, 4, 1, 1, 1, 1), Pattern{N: 2, M: 4}, []float32{1, 1, 0, 0}},
		{"negative tie", mat(1, 4, -2, 2, 1, -2), Pattern{N: 2, M: 4}, []float32{-2, 2, 0, 0}},
		{"two rows, two chunks", mat(2, 8, 9, 0, 0, 1, 5, 6, 7, 8, 0, 0, 0, 0, 1, 0, 0, 0),
			Pattern{N: 2, M: 4}, []float32{9, 0, 0, 1, 0, 0, 7, 8, 0, 0, 0, 0, 1, 0, 0, 0}},
		{"1:2 tf32", mat(1, 4, 1, 2, -4, 3), Pattern{N: 1, M: 2}, []float32{0, 2, -4, 0}},
		{"partial trailing chunk", mat(1, 6, 1, 2, 3, 4, 5, 6), Pattern{N: 2, M: 4}, []float32{0, 0, 3, 4, 5, 6}},
	}
	for _, tc := range tests {
		got := PruneMagnitude(tc.in, tc.p)
		if !equal(got.Data, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got.Data, tc.want)
		}
		if err := CheckPattern(got, tc.p); err != nil {
			t.Errorf("%s: pruned matrix fails check: %v", tc.name, err)
		}
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCheckPatternErrors(t *testing.T) {
	tests := []struct {
		name string
		m    Matrix
		p    Pattern
		want string
	}{
		{"row 1 group 1", mat(2, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0),
			Pattern{N: 2, M: 4}, "row 1, column group 1 (columns 4-7) has 3 nonzeros"},
		{"1:2", mat(1, 4, 1, 0, 1, 1), Pattern{N: 1, M: 2}, "row 0, column group 1"},
		{"short data", Matrix{Rows: 2, Cols: 4, Data: make([]float32, 7)}, Pattern{N: 2, M: 4}, "needs 8 values, has 7"},
		{"bad pattern", mat(1, 4, 0, 0, 0, 0), Pattern{N: 4, M: 4}, "bad sparsity pattern"},
	}
	for _, tc := range tests {
		err := CheckPattern(tc.m, tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
		if _, err := Compress(tc.m, tc.p); err == nil {
			t.Errorf("%s: Compress accepted a bad matrix", tc.name)
		}
	}
	if _, err := Compress(mat(1, 6, 1, 0, 0, 0, 0, 0), Pattern{N: 2, M: 4}); err == nil ||
		!strings.Contains(err.Error(), "not a multiple") {
		t.Errorf("Compress of 6 columns: %v", err)
	}
}

func TestPairwise(t *testing.T) {
	in := mat(1, 8, 1, 1, 5, 0, 0, 4, 2, 2)
	got := PrunePairwise(in)
	want := []float32{0, 0, 5, 0, 0, 4, 0, 0} // pair sums 2, 5, 4, 4: keep pairs 1 and 2
	if !equal(got.Data, want) {
		t.Errorf("PrunePairwise = %v, want %v", got.Data, want)
	}
	if err := CheckPairwise(got); err != nil {
		t.Errorf("pruned fails: %v", err)
	}
	err := CheckPairwise(mat(1, 8, 1, 0, 0, 1, 1, 0, 0, 0))
	if err == nil || !strings.Contains(err.Error(), "row 0, column group 0") {
		t.Errorf("CheckPairwise error = %v", err)
	}
	// Pair-wise 4:8 is plain 4:8 too.
	if err := CheckPattern(got, Pairwise48); err != nil {
		t.Errorf("pair-wise result is not 4:8: %v", err)
	}
}

// randomSparse makes a rows x cols matrix of the precision's values,
// pruned to p, with some extra zeros so that under-filled chunks occur.
func randomSparse(rng *rand.Rand, rows, cols int, p Pattern, prec Precision) Matrix {
	m := randomDense(rng, rows, cols, prec)
	for i := range m.Data {
		if rng.Intn(5) == 0 {
			m.Data[i] = 0
		}
	}
	return PruneMagnitude(m, p)
}

func randomDense(rng *rand.Rand, rows, cols int, prec Precision) Matrix {
	m := NewMatrix(rows, cols)
	for i := range m.Data {
		if prec == INT8 {
			m.Data[i] = float32(rng.Intn(256) - 128)
		} else {
			m.Data[i] = RoundTo(float32(rng.NormFloat64()*4), prec)
		}
	}
	return m
}

func patternOf(prec Precision) Pattern {
	if prec == TF32 {
		return Pattern{N: 1, M: 2}
	}
	return Pattern{N: 2, M: 4}
}

func TestCompressRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, p := range []Pattern{{N: 2, M: 4}, {N: 1, M: 2}, {N: 4, M: 8}, {N: 1, M: 4}, {N: 2, M: 8}} {
		for trial := 0; trial < 50; trial++ {
			rows, cols := 1+rng.Intn(20), p.M*(1+rng.Intn(12))
			m := randomSparse(rng, rows, cols, p, FP16)
			c, err := Compress(m, p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if len(c.Values) != rows*cols*p.N/p.M {
				t.Fatalf("%s: %d values for %dx%d", p, len(c.Values), rows, cols)
			}
			if d := c.Decompress(); !equal(d.Data, m.Data) {
				t.Fatalf("%s %dx%d: decompress differs", p, rows, cols)
			}
			idx, err := UnpackMetadata(c.Metadata(), rows, cols, p)
			if err != nil {
				t.Fatalf("%s: unpack: %v", p, err)
			}
			for i := range idx {
				if idx[i] != c.Indices[i] {
					t.Fatalf("%s: index %d: %d vs %d", p, i, idx[i], c.Indices[i])
				}
			}
			bits := map[Pattern]int{{N: 2, M: 4}: 2, {N: 1, M: 2}: 4, {N: 4, M: 8}: 3, {N: 1, M: 4}: 2, {N: 2, M: 8}: 3}[p]
			if c.MetadataBytes() != (len(c.Values)*bits+7)/8 {
				t.Fatalf("%s metadata %d bytes for %d values, want %d bits each",
					p, c.MetadataBytes(), len(c.Values), bits)
			}
		}
	}
}

func TestMetadataEncoding(t *testing.T) {
	// Every 2:4 chunk keeps positions 0 and 2: nibble 0b1000, as in the
	// MLIR sm80 sparse-mma test (0x8888 per 16 bits).
	m := mat(1, 16, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 0)
	c, err := Compress(m, Pattern{N: 2, M: 4})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Metadata(); len(w) != 1 || w[0] != 0x8888 {
		t.Errorf("metadata = %#x, want [0x8888]", w)
	}
	// tf32 1:2: kept position 0 -> 0b0100, position 1 -> 0b1110.
	c, err = Compress(mat(1, 4, 1, 0, 0, 2), Pattern{N: 1, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Metadata(); w[0] != 0xE4 {
		t.Errorf("tf32 metadata = %#x, want 0xe4", w[0])
	}
	// Under-filled chunk: single nonzero in slot 3 pads with slot 0.
	c, _ = Compress(mat(1, 4, 0, 0, 0, 7), Pattern{N: 2, M: 4})
	if c.Indices[0] != 0 || c.Indices[1] != 3 || c.Metadata()[0] != 0xC {
		t.Errorf("padded chunk indices %v meta %#x", c.Indices, c.Metadata())
	}
}

func TestUnpackMetadataRejects(t *testing.T) {
	tests := []struct {
		name  string
		words []uint32
		rows  int
		cols  int
		p     Pattern
		want  string
	}{
		{"0b0000", []uint32{0x0}, 1, 4, Pattern{N: 2, M: 4}, "invalid index pair 0b0000"},
		{"0b0101", []uint32{0x5}, 1, 4, Pattern{N: 2, M: 4}, "invalid index pair 0b0101"},
		{"0b1010", []uint32{0xA}, 1, 4, Pattern{N: 2, M: 4}, "invalid index pair 0b1010"},
		{"0b1111", []uint32{0xF}, 1, 4, Pattern{N: 2, M: 4}, "invalid index pair 0b1111"},
		{"unordered", []uint32{0x1}, 1, 4, Pattern{N: 2, M: 4}, "not ascending"},
		{"second row second group", []uint32{0x0888}, 2, 8, Pattern{N: 2, M: 4}, "row 1, column group 1"},
		{"tf32 bad nibble", []uint32{0x8}, 1, 2, Pattern{N: 1, M: 2}, "tf32 metadata nibble 0b1000"},
		{"short", []uint32{0x4444}, 3, 16, Pattern{N: 2, M: 4}, "1 words"},
		{"bad cols", []uint32{0x4}, 1, 5, Pattern{N: 2, M: 4}, "bad shape"},
	}
	for _, tc := range tests {
		_, err := UnpackMetadata(tc.words, tc.rows, tc.cols, tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSparseEqualsDense: mma.sp on the compressed A equals mma on the
// decompressed (masked) A exactly, over random shapes, masks and values.
func TestSparseEqualsDenseProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, prec := range Precisions {
		p := patternOf(prec)
		for trial := 0; trial < 40; trial++ {
			m, n, k := 1+rng.Intn(24), 1+rng.Intn(16), 4*(1+rng.Intn(16))
			a := randomSparse(rng, m, k, p, prec)
			b := randomDense(rng, k, n, prec)
			c := randomDense(rng, m, n, prec)
			ca, err := Compress(a, p)
			if err != nil {
				t.Fatal(err)
			}
			dense, err := MMA(a, b, c, prec)
			if err != nil {
				t.Fatalf("%s: %v", prec, err)
			}
			sparse, err := MMASp(ca, b, c, prec)
			if err != nil {
				t.Fatalf("%s: %v", prec, err)
			}
			for i := range dense.Data {
				if dense.Data[i] != sparse.Data[i] {
					t.Fatalf("%s %dx%dx%d: element %d dense %g sparse %g",
						prec, m, n, k, i, dense.Data[i], sparse.Data[i])
				}
			}
		}
	}
}

// TestPruneCompressSelectEveryPattern: for every supported N:M, a random
// dense matrix pruned by magnitude satisfies the pattern, round-trips
// through Compress and its metadata, and mma.sp-style selection on the
// compressed form equals the dense product of the pruned matrix exactly.
func TestPruneCompressSelectEveryPattern(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, p := range []Pattern{{N: 1, M: 2}, {N: 2, M: 4}, {N: 1, M: 4}, {N: 2, M: 8}, {N: 4, M: 8}} {
		for _, prec := range []Precision{FP16, INT8} {
			for trial := 0; trial < 10; trial++ {
				m, n, k := 1+rng.Intn(20), 1+rng.Intn(12), p.M*(1+rng.Intn(8))
				a := PruneMagnitude(randomDense(rng, m, k, prec), p)
				if err := CheckPattern(a, p); err != nil {
					t.Fatalf("%s: pruned matrix: %v", p, err)
				}
				ca, err := Compress(a, p)
				if err != nil {
					t.Fatal(err)
				}
				back, err := FromMetadata(ca.Values, ca.Metadata(), m, k, p)
				if err != nil || !equal(back.Decompress().Data, a.Data) {
					t.Fatalf("%s: metadata round trip: %v", p, err)
				}
				b, c := randomDense(rng, k, n, prec), randomDense(rng, m, n, prec)
				dense, err := MMA(a, b, c, prec)
				if err != nil {
					t.Fatal(err)
				}
				sparse, err := MMASp(back, b, c, prec)
				if err != nil {
					t.Fatal(err)
				}
				if !equal(dense.Data, sparse.Data) {
					t.Fatalf("%s %s %dx%dx%d: mma.sp differs from mma", p, prec, m, n, k)
				}
			}
		}
	}
}

func TestMMAInt8Exact(t *testing.T) {
	// Against an independent int64 reference.
	rng := rand.New(rand.NewSource(3))
	a := randomDense(rng, 16, 64, INT8)
	b := randomDense(rng, 64, 8, INT8)
	c := randomDense(rng, 16, 8, INT8)
	d, err := MMA(a, b, c, INT8)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		for j := 0; j < 8; j++ {
			s := int64(c.At(i, j))
			for k := 0; k < 64; k++ {
				s += int64(a.At(i, k)) * int64(b.At(k, j))
			}
			if float32(s) != d.At(i, j) {
				t.Fatalf("(%d,%d): %g, want %d", i, j, d.At(i, j), s)
			}
		}
	}
}

func TestMMABadInput(t *testing.T) {
	ok := NewMatrix(2, 4)
	tests := []struct {
		name    string
		a, b, c Matrix
		prec    Precision
		want    string
	}{
		{"shape", ok, NewMatrix(3, 2), NewMatrix(2, 2), FP16, "shapes do not match"},
		{"not fp16", mat(1, 1, 0.1), mat(1, 1, 1), mat(1, 1, 0), FP16, "A[0][0] = 0.1 is not a fp16 value"},
		{"not int8", mat(1, 1, 1), mat(1, 1, 300), mat(1, 1, 0), INT8, "B[0][0] = 300"},
		{"precision", ok, NewMatrix(4, 1), NewMatrix(2, 1), Precision(7), "unknown precision"},
	}
	for _, tc := range tests {
		_, err := MMA(tc.a, tc.b, tc.c, tc.prec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	bad := &Compressed{Rows: 1, Cols: 4, Pattern: Pattern{N: 2, M: 4}, Values: []float32{1, 2}, Indices: []uint8{2, 1}}
	if _, err := MMASp(bad, NewMatrix(4, 1), NewMatrix(1, 1), FP16); err == nil ||
		!strings.Contains(err.Error(), "row 0, column group 0") {
		t.Errorf("MMASp with unordered indices: %v", err)
	}
}
