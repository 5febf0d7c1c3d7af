package tensorcore

import (
	"fmt"
	"math/bits"
)

// Compressed is a structured-sparse matrix in the hardware's storage form:
// the kept values of every chunk plus the position of each inside its
// chunk. A chunk with fewer nonzeros than Pattern.N keeps zeros at the
// lowest free positions, as the hardware format always holds N entries.
type Compressed struct {
	Rows, Cols int // logical (uncompressed) shape
	Pattern    Pattern
	Values     []float32 // Rows x Cols*N/M kept values, row-major
	Indices    []uint8   // one index (position within its chunk) per kept value, ascending within a chunk
}

// KeptCols is the number of kept values per row (Cols*N/M).
func (c *Compressed) KeptCols() int { return c.Pattern.Kept(c.Cols) }

// Compress packs m; it is an error if m violates p (the error names the
// row and column group) or if Cols is not a multiple of p.M.
func Compress(m Matrix, p Pattern) (*Compressed, error) {
	if err := CheckPattern(m, p); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	if m.Cols%p.M != 0 {
		return nil, fmt.Errorf("compress: %d columns is not a multiple of "+
			"the %s chunk width %d", m.Cols, p, p.M)
	}
	c := &Compressed{Rows: m.Rows, Cols: m.Cols, Pattern: p}
	n := m.Rows * c.KeptCols()
	c.Values = make([]float32, 0, n)
	c.Indices = make([]uint8, 0, n)
	for r := 0; r < m.Rows; r++ {
		for c0 := 0; c0 < m.Cols; c0 += p.M {
			chunk := m.Data[r*m.Cols+c0 : r*m.Cols+c0+p.M]
			for _, i := range keptPositions(chunk, p.N) {
				c.Values = append(c.Values, chunk[i])
				c.Indices = append(c.Indices, uint8(i))
			}
		}
	}
	return c, nil
}

// keptPositions returns n ascending positions covering every nonzero of
// chunk, padded with the lowest zero positions.
func keptPositions(chunk []float32, n int) []int {
	var mask uint64
	cnt := 0
	for i, v := range chunk {
		if v != 0 {
			mask |= 1 << i
			cnt++
		}
	}
	for i := 0; cnt < n; i++ {
		if mask&(1<<i) == 0 {
			mask |= 1 << i
			cnt++
		}
	}
	out := make([]int, 0, n)
	for i := range chunk {
		if mask&(1<<i) != 0 {
			out = append(out, i)
		}
	}
	return out
}

// Decompress expands back to the logical matrix (zeros where not kept).
func (c *Compressed) Decompress() Matrix {
	m := NewMatrix(c.Rows, c.Cols)
	p := c.Pattern
	for k := range c.Values {
		r := k / c.KeptCols()
		chunk := (k % c.KeptCols()) / p.N
		m.Data[r*c.Cols+chunk*p.M+int(c.Indices[k])] = c.Values[k]
	}
	return m
}

// metaFieldBits is the metadata width of one kept value: 2 bits for 2:4
// (the PTX 2-bit index); 4 bits for 1:2 (tf32), whose 32-bit element is
// indexed as two adjacent 16-bit halves of a 2:4 chunk; otherwise the bits
// needed for an index within M (not a PTX format: stcsim's own).
func metaFieldBits(p Pattern) int {
	switch p {
	case Pattern{N: 2, M: 4}:
		return 2
	case Pattern{N: 1, M: 2}:
		return 4
	}
	return bits.Len(uint(p.M - 1))
}

// encodeField is the metadata bit field of one kept index.
func encodeField(p Pattern, idx uint8) uint32 {
	if p == (Pattern{N: 1, M: 2}) {
		lo := uint32(2 * idx)
		return lo | (lo+1)<<2 // 0 -> 0b0100, 1 -> 0b1110
	}
	return uint32(idx)
}

// Metadata packs the indices in the PTX mma.sp::ordered_metadata encoding:
// a flat row-major stream of fields, least significant bits first, 2 bits
// per index for 2:4 (so the two indices of a chunk form one nibble,
// lower index in the low bits: the valid nibbles are 0x4, 0x8, 0x9, 0xC,
// 0xD, 0xE) and one nibble 0x4 or 0xE per kept tf32 value for 1:2.
// SparseLayout.Distribute moves these words into mma.sp's registers.
func (c *Compressed) Metadata() []uint32 {
	fb := metaFieldBits(c.Pattern)
	words := make([]uint32, (len(c.Indices)*fb+31)/32)
	for k, idx := range c.Indices {
		putBits(words, k*fb, encodeField(c.Pattern, idx))
	}
	return words
}

// MetadataBytes is the storage size of the metadata (bits rounded up to
// bytes): 1/8 of the value bytes for 2:4 fp16/bf16 and 1:2 tf32.
func (c *Compressed) MetadataBytes() int {
	return (len(c.Indices)*metaFieldBits(c.Pattern) + 7) / 8
}

// UnpackMetadata decodes metadata words of a rows x cols matrix with
// pattern p into indices (one per kept value). It rejects a short stream,
// the invalid index pairs 0b0000, 0b0101, 0b1010, 0b1111 (two kept values
// in one slot), unordered pairs (ordered_metadata wants ascending), tf32
// nibbles other than 0x4 and 0xE, and indices beyond the chunk.
func UnpackMetadata(words []uint32, rows, cols int, p Pattern) ([]uint8, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if rows < 0 || cols < 0 || cols%p.M != 0 {
		return nil, fmt.Errorf("metadata: bad shape %dx%d for %s", rows, cols, p)
	}
	kept := p.Kept(cols)
	fb := metaFieldBits(p)
	need := (rows*kept*fb + 31) / 32
	if len(words) < need {
		return nil, fmt.Errorf("metadata: %d words, a %dx%d %s matrix needs %d",
			len(words), rows, cols, p, need)
	}
	field := func(k int) uint32 { return getBits(words, k*fb, fb) }
	idx := make([]uint8, rows*kept)
	for k := range idx {
		r, g := k/kept, (k%kept)/p.N
		v, err := decodeField(p, field(k))
		if err != nil {
			return nil, fmt.Errorf("metadata: row %d, column group %d: %w", r, g, err)
		}
		idx[k] = v
		if k%p.N > 0 && idx[k-1] >= v {
			if p == (Pattern{N: 2, M: 4}) {
				pair := uint32(idx[k-1]) | uint32(v)<<2
				if idx[k-1] == v {
					return nil, fmt.Errorf("metadata: row %d, column group %d: "+
						"invalid index pair 0b%04b (both values in slot %d)", r, g, pair, v)
				}
				return nil, fmt.Errorf("metadata: row %d, column group %d: "+
					"index pair 0b%04b is not ascending (ordered_metadata)", r, g, pair)
			}
			return nil, fmt.Errorf("metadata: row %d, column group %d: indices "+
				"%d, %d not strictly ascending", r, g, idx[k-1], v)
		}
	}
	return idx, nil
}

func decodeField(p Pattern, f uint32) (uint8, error) {
	if p == (Pattern{N: 1, M: 2}) {
		switch f {
		case 0x4:
			return 0, nil
		case 0xE:
			return 1, nil
		}
		return 0, fmt.Errorf("tf32 metadata nibble 0b%04b invalid (want 0b0100 or 0b1110)", f)
	}
	if int(f) >= p.M {
		return 0, fmt.Errorf("index %d beyond chunk width %d", f, p.M)
	}
	return uint8(f), nil
}

// FromMetadata builds a Compressed from kept values and metadata words,
// validating both (see UnpackMetadata).
func FromMetadata(values []float32, words []uint32, rows, cols int, p Pattern) (*Compressed, error) {
	idx, err := UnpackMetadata(words, rows, cols, p)
	if err != nil {
		return nil, err
	}
	if len(values) != len(idx) {
		return nil, fmt.Errorf("compressed %dx%d %s: %d values, want %d",
			rows, cols, p, len(values), len(idx))
	}
	return &Compressed{Rows: rows, Cols: cols, Pattern: p,
		Values: append([]float32(nil), values...), Indices: idx}, nil
}

// Validate checks sizes and that every chunk's indices are ascending and
// inside the chunk.
func (c *Compressed) Validate() error {
	if err := c.Pattern.Check(); err != nil {
		return err
	}
	if c.Rows < 0 || c.Cols < 0 || c.Cols%c.Pattern.M != 0 {
		return fmt.Errorf("compressed: bad shape %dx%d for %s", c.Rows, c.Cols, c.Pattern)
	}
	n := c.Rows * c.KeptCols()
	if len(c.Values) != n || len(c.Indices) != n {
		return fmt.Errorf("compressed %dx%d %s: %d values and %d indices, want %d",
			c.Rows, c.Cols, c.Pattern, len(c.Values), len(c.Indices), n)
	}
	for k, v := range c.Indices {
		r, g := k/c.KeptCols(), (k%c.KeptCols())/c.Pattern.N
		if int(v) >= c.Pattern.M || (k%c.Pattern.N > 0 && c.Indices[k-1] >= v) {
			return fmt.Errorf("compressed: row %d, column group %d: indices "+
				"not strictly ascending within 0..%d", r, g, c.Pattern.M-1)
		}
	}
	return nil
}

// putBits ORs v into the stream at bit offset bit (a field may straddle
// two words when its width does not divide 32).
func putBits(words []uint32, bit int, v uint32) {
	words[bit/32] |= v << (bit % 32)
	if bit%32 > 0 && bit/32+1 < len(words) {
		words[bit/32+1] |= v >> (32 - bit%32)
	}
}

// getBits reads width bits at bit offset bit.
func getBits(words []uint32, bit, width int) uint32 {
	v := uint64(words[bit/32])
	if bit/32+1 < len(words) {
		v |= uint64(words[bit/32+1]) << 32
	}
	return uint32(v>>(bit%32)) & (1<<width - 1)
}
