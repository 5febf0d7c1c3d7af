package tensorcore

import (
	"fmt"
	"math"
)

// Matrix is a row-major matrix. fp16, bf16 and tf32 values are held as
// float32 (rounded to their precision by the caller or by RoundTo); int8
// values are held as integers in float32.
type Matrix struct {
	Rows, Cols int
	Data       []float32
}

// NewMatrix makes a zero rows x cols matrix.
func NewMatrix(rows, cols int) Matrix {
	return Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// At is element (r, c).
func (m Matrix) At(r, c int) float32 { return m.Data[r*m.Cols+c] }

// Set stores element (r, c).
func (m Matrix) Set(r, c int, v float32) { m.Data[r*m.Cols+c] = v }

// Clone is a deep copy.
func (m Matrix) Clone() Matrix {
	return Matrix{Rows: m.Rows, Cols: m.Cols, Data: append([]float32(nil), m.Data...)}
}

// check reports a shape that does not match the data.
func (m Matrix) check(name string) error {
	if m.Rows < 0 || m.Cols < 0 || len(m.Data) != m.Rows*m.Cols {
		return fmt.Errorf("matrix %s: %dx%d needs %d values, has %d",
			name, m.Rows, m.Cols, m.Rows*m.Cols, len(m.Data))
	}
	return nil
}

// floatFormat describes a binary floating-point input format by the
// number of explicit mantissa bits, the smallest normal exponent and the
// largest finite value.
type floatFormat struct {
	mantissa  int
	minExp    int
	maxFinite float64
}

var formats = map[Precision]floatFormat{
	FP16: {10, -14, 65504},
	BF16: {7, -126, (2 - math.Pow(2, -7)) * math.Pow(2, 127)},
	TF32: {10, -126, (2 - math.Pow(2, -10)) * math.Pow(2, 127)},
}

// RoundTo rounds x to the nearest value of the precision (ties to even, as
// cvt.rn does), saturating int8 to [-128, 127]; values beyond a float
// format's range become infinities. Unknown precisions return x unchanged;
// use Representable to validate.
func RoundTo(x float32, precision Precision) float32 {
	if precision == INT8 {
		v := math.RoundToEven(float64(x))
		return float32(math.Max(-128, math.Min(127, v)))
	}
	f, ok := formats[precision]
	if !ok || math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x == 0 {
		return x
	}
	v := float64(x)
	_, exp := math.Frexp(math.Abs(v)) // |v| = frac * 2^exp, frac in [0.5, 1)
	e := exp - 1
	if e < f.minExp {
		e = f.minExp // subnormal: fixed quantum
	}
	q := math.Ldexp(1, e-f.mantissa)
	r := math.RoundToEven(v/q) * q
	if math.Abs(r) > f.maxFinite {
		return float32(math.Copysign(math.Inf(1), v))
	}
	return float32(r)
}

// Representable says whether x is exactly a value of the precision (NaN
// and infinities are values of the float formats). It reads the float32
// bits: a format with fewer mantissa bits must have the dropped ones zero.
func Representable(x float32, precision Precision) bool {
	b := math.Float32bits(x)
	switch precision {
	case BF16:
		return b&0xFFFF == 0 || isNaN32(b)
	case TF32:
		return b&0x1FFF == 0 || isNaN32(b)
	case FP16:
		return fp16Representable(b)
	case INT8:
		return x == float32(math.Trunc(float64(x))) && x >= -128 && x <= 127
	}
	return false
}

func isNaN32(b uint32) bool { return b&0x7F800000 == 0x7F800000 && b&0x7FFFFF != 0 }

func fp16Representable(b uint32) bool {
	exp := int(b>>23&0xFF) - 127
	switch {
	case b&0x7FFFFFFF == 0 || exp == 128: // zero, inf, NaN
		return true
	case exp > 15 || exp < -24:
		return false
	case exp >= -14: // fp16 normal: 10 mantissa bits
		return b&0x1FFF == 0
	}
	return b&(1<<(13-14-exp)-1) == 0 // fp16 subnormal: multiples of 2^-24
}

// RoundMatrix rounds every element to the precision.
func RoundMatrix(m Matrix, precision Precision) Matrix {
	out := m.Clone()
	for i, v := range out.Data {
		out.Data[i] = RoundTo(v, precision)
	}
	return out
}

func knownPrecision(p Precision) error {
	if !p.Valid() {
		return fmt.Errorf("unknown precision %v (want %s)", p, orList(precisionNames))
	}
	return nil
}
