package tensorcore

import "fmt"

// SparseLayout is how one warp-level mma.sp instruction spreads its
// compressed A operand (16 x K/2 kept values) and its metadata over the 32
// lanes of a warp (PTX ISA 9.7.14.6).
//
// A: lane = 4*groupID + threadID_in_group. The compressed tile is the A
// fragment of the dense mma of half the K: each register holds
// ElemsPerReg = 4/element-bytes consecutive kept values of one row;
// register r covers row groupID + 8*(r%2) and the column block r/2 of
// 4*ElemsPerReg kept values, of which the lane holds the slice
// threadID_in_group*ElemsPerReg onwards.
//
// Metadata: a row's indices form a bit stream (Compressed.Metadata
// order) of 16*MetaThreads bits. Within each quad, the MetaThreads lanes
// starting at 4*groupID + selector*MetaThreads hold it: lane j of them has
// bits [16j, 16j+16) of row groupID in its low half and the same bits of
// row groupID+8 in its high half. The sparsity selector ranges over
// 0..4/MetaThreads-1 (one lane per quad: 0-3; a pair: 0 = T0,T1, 1 =
// T2,T3; all four: 0).
type SparseLayout struct {
	Precision   Precision
	Shape       Shape // logical (uncompressed) m16nNkK
	Pattern     Pattern
	ElemsPerReg int // kept A values per 32-bit register
	RegsA       int // A registers per lane
	MetaThreads int // lanes per quad holding metadata
}

// SparseLayoutFor returns the layout of mma.sp for a precision and a
// sparse shape: f16/bf16 m16n8k16 and m16n8k32, tf32 m16n8k8 and m16n8k16,
// s8 (int8) m16n8k32 and m16n8k64.
func SparseLayoutFor(precision Precision, sh Shape) (SparseLayout, error) {
	ks := map[Precision][]int{FP16: {16, 32}, BF16: {16, 32}, TF32: {8, 16}, INT8: {32, 64}}
	allowed, ok := ks[precision]
	if !ok {
		return SparseLayout{}, fmt.Errorf("mma.sp: unknown precision %v", precision)
	}
	if sh.M != 16 || sh.N != 8 || (sh.K != allowed[0] && sh.K != allowed[1]) {
		return SparseLayout{}, fmt.Errorf("mma.sp: no %s shape %s (have m16n8k%d, m16n8k%d)",
			precision, sh, allowed[0], allowed[1])
	}
	l := SparseLayout{Precision: precision, Shape: sh, Pattern: Pattern{N: 2, M: 4},
		ElemsPerReg: 4 / precision.ElementBytes()}
	if precision == TF32 {
		l.Pattern = Pattern{N: 1, M: 2}
	}
	keptCols := l.Pattern.Kept(sh.K)
	l.RegsA = 16 * keptCols / 32 / l.ElemsPerReg
	l.MetaThreads = keptCols * metaFieldBits(l.Pattern) / 16
	return l, nil
}

// Selectors is the number of valid sparsity-selector values.
func (l SparseLayout) Selectors() int { return 4 / l.MetaThreads }

// AElement is the (row, kept column) of element i of a lane's A fragment
// (elements numbered low to high across its registers).
func (l SparseLayout) AElement(lane, i int) (row, keptCol int) {
	g, t := lane>>2, lane&3
	r, within := i/l.ElemsPerReg, i%l.ElemsPerReg
	row = g + 8*(r%2)
	keptCol = (r/2)*4*l.ElemsPerReg + t*l.ElemsPerReg + within
	return row, keptCol
}

// MetaLane is the lane and bit offset of the 16-bit metadata unit u
// (bits [16u, 16u+16) of a row's metadata) of row, under a selector.
func (l SparseLayout) MetaLane(row, u, selector int) (lane, bit int) {
	return 4*(row%8) + selector*l.MetaThreads + u, 16 * (row / 8)
}

// WarpFragments are the registers of one mma.sp's A operand: per lane its
// A elements and its metadata register e.
type WarpFragments struct {
	A [32][]float32
	E [32]uint32
}

func (l SparseLayout) checkSelector(selector int) error {
	if selector < 0 || selector >= l.Selectors() {
		return fmt.Errorf("mma.sp %s %s: sparsity selector %d out of range 0..%d",
			l.Precision, l.Shape, selector, l.Selectors()-1)
	}
	return nil
}

// Distribute places a compressed 16 x K tile into the warp's registers.
func (l SparseLayout) Distribute(c *Compressed, selector int) (WarpFragments, error) {
	var f WarpFragments
	if err := l.checkSelector(selector); err != nil {
		return f, err
	}
	if err := c.Validate(); err != nil {
		return f, err
	}
	if c.Rows != l.Shape.M || c.Cols != l.Shape.K || c.Pattern != l.Pattern {
		return f, fmt.Errorf("mma.sp %s %s: A is %dx%d %s, want %dx%d %s", l.Precision,
			l.Shape, c.Rows, c.Cols, c.Pattern, l.Shape.M, l.Shape.K, l.Pattern)
	}
	kept := c.KeptCols()
	n := l.RegsA * l.ElemsPerReg
	for lane := range f.A {
		f.A[lane] = make([]float32, n)
		for i := range f.A[lane] {
			r, k := l.AElement(lane, i)
			f.A[lane][i] = c.Values[r*kept+k]
		}
	}
	words := c.Metadata() // 16*MetaThreads bits per row: MetaThreads/2 words
	for row := 0; row < l.Shape.M; row++ {
		for u := 0; u < l.MetaThreads; u++ {
			bit := row*16*l.MetaThreads + 16*u
			unit := words[bit/32] >> (bit % 32) & 0xFFFF
			lane, off := l.MetaLane(row, u, selector)
			f.E[lane] |= unit << off
		}
	}
	return f, nil
}

// Gather reads the compressed A tile back from the registers, taking the
// metadata from the lanes the selector names; corrupt metadata is an
// error naming the row and column group.
func (l SparseLayout) Gather(f WarpFragments, selector int) (*Compressed, error) {
	if err := l.checkSelector(selector); err != nil {
		return nil, err
	}
	kept := l.Pattern.Kept(l.Shape.K)
	values := make([]float32, l.Shape.M*kept)
	n := l.RegsA * l.ElemsPerReg
	for lane := range f.A {
		if len(f.A[lane]) != n {
			return nil, fmt.Errorf("mma.sp %s %s: lane %d holds %d A values, want %d",
				l.Precision, l.Shape, lane, len(f.A[lane]), n)
		}
		for i, v := range f.A[lane] {
			r, k := l.AElement(lane, i)
			values[r*kept+k] = v
		}
	}
	words := make([]uint32, l.Shape.M*l.MetaThreads/2)
	for row := 0; row < l.Shape.M; row++ {
		for u := 0; u < l.MetaThreads; u++ {
			lane, off := l.MetaLane(row, u, selector)
			bit := row*16*l.MetaThreads + 16*u
			words[bit/32] |= (f.E[lane] >> off & 0xFFFF) << (bit % 32)
		}
	}
	c, err := FromMetadata(values, words, l.Shape.M, l.Shape.K, l.Pattern)
	if err != nil {
		return nil, fmt.Errorf("mma.sp %s %s selector %d: %w", l.Precision, l.Shape, selector, err)
	}
	return c, nil
}

// WarpMMASp executes one mma.sp instruction from the warp's A registers
// and metadata: D = A·B + C with B (K x 8) and C (16 x 8) given as
// matrices (their fragments are those of the dense mma).
func (l SparseLayout) WarpMMASp(f WarpFragments, selector int, b, c Matrix) (Matrix, error) {
	a, err := l.Gather(f, selector)
	if err != nil {
		return Matrix{}, err
	}
	if b.Rows != l.Shape.K || b.Cols != l.Shape.N {
		return Matrix{}, fmt.Errorf("mma.sp %s %s: B is %dx%d, want %dx%d",
			l.Precision, l.Shape, b.Rows, b.Cols, l.Shape.K, l.Shape.N)
	}
	return MMASp(a, b, c, l.Precision)
}
