package tensorcore

import (
	"fmt"
	"math"
)

// MMA computes D = A·B + C for A (M x K), B (K x N) and C (M x N), with
// inputs of the given precision. Floating-point inputs must already be
// values of the precision (RoundTo); products are exact in float32 for
// every input format and are added to the float32 accumulator one by one
// in ascending k. int8 inputs must be integers in [-128, 127]; they
// accumulate in int32 with wrap-around (mma without .satfinite), and every
// result must be exactly representable in float32 (|d| <= 2^24).
func MMA(a, b, c Matrix, precision Precision) (Matrix, error) {
	if err := checkOperands(a, b, c, a.Rows, a.Cols, precision); err != nil {
		return Matrix{}, fmt.Errorf("mma: %w", err)
	}
	d := NewMatrix(c.Rows, c.Cols)
	col := make([]float32, b.Rows)
	for j := 0; j < b.Cols; j++ {
		for k := range col {
			col[k] = b.At(k, j)
		}
		for i := 0; i < a.Rows; i++ {
			d.Set(i, j, dot(a.Data[i*a.Cols:(i+1)*a.Cols], col, c.At(i, j), precision))
		}
	}
	return d, finish(d, precision)
}

// MMASp computes D = A·B + C with A given compressed, the way the sparse
// tensor core does it: for each kept A value, a selector mux driven by its
// metadata index picks one of the M candidate B elements of its chunk, so
// a K-deep dot product takes K*N/M products. Kept values are accumulated
// in ascending k, the order MMA uses on the decompressed A, so both give
// identical results (zero products do not change a float32 sum).
func MMASp(a *Compressed, b, c Matrix, precision Precision) (Matrix, error) {
	if err := a.Validate(); err != nil {
		return Matrix{}, fmt.Errorf("mma.sp: %w", err)
	}
	if err := checkOperandsSp(a, b, c, precision); err != nil {
		return Matrix{}, fmt.Errorf("mma.sp: %w", err)
	}
	p := a.Pattern
	kept := a.KeptCols()
	d := NewMatrix(c.Rows, c.Cols)
	bt := transpose(b)             // one B column per output column j
	sel := make([]int, kept)       // mux outputs: the B row each kept value meets
	muxed := make([]float32, kept) // the B operand after the muxes
	for i := 0; i < a.Rows; i++ {
		idx := a.Indices[i*kept : (i+1)*kept]
		for s := range sel {
			sel[s] = (s/p.N)*p.M + int(idx[s])
		}
		for j := 0; j < b.Cols; j++ {
			col := bt.Data[j*b.Rows : (j+1)*b.Rows]
			for s := range muxed {
				chunk := sel[s] - int(idx[s])
				muxed[s] = selectorMux(col[chunk:chunk+p.M], idx[s])
			}
			d.Set(i, j, dot(a.Values[i*kept:(i+1)*kept], muxed, c.At(i, j), precision))
		}
	}
	return d, finish(d, precision)
}

func transpose(m Matrix) Matrix {
	t := NewMatrix(m.Cols, m.Rows)
	for r := 0; r < m.Rows; r++ {
		for c := 0; c < m.Cols; c++ {
			t.Data[c*m.Rows+r] = m.Data[r*m.Cols+c]
		}
	}
	return t
}

// selectorMux is one M-to-1 multiplexer in front of a multiplier: the
// metadata index picks which B element of the chunk meets the kept A value.
func selectorMux(candidates []float32, index uint8) float32 {
	return candidates[index]
}

// dot is one accumulator lane: acc + sum of x[k]*y[k] in ascending k.
func dot(x, y []float32, acc float32, precision Precision) float32 {
	if precision == INT8 {
		s := int32(acc)
		for k := range x {
			s += int32(x[k]) * int32(y[k]) // wraps like the s32 accumulator
		}
		return float32(s)
	}
	for k := range x {
		acc += float32(x[k] * y[k]) // the conversion forbids a fused multiply-add
	}
	return acc
}

// finish rejects int8 results that float32 cannot hold exactly.
func finish(d Matrix, precision Precision) error {
	if precision != INT8 {
		return nil
	}
	for i, v := range d.Data {
		if math.Abs(float64(v)) > 1<<24 {
			return fmt.Errorf("mma: int32 result %g at row %d, column %d is "+
				"not exact in a float32 Matrix", v, i/d.Cols, i%d.Cols)
		}
	}
	return nil
}

func checkOperands(a, b, c Matrix, m, k int, precision Precision) error {
	if err := knownPrecision(precision); err != nil {
		return err
	}
	for _, x := range []struct {
		n string
		m Matrix
	}{{"A", a}, {"B", b}, {"C", c}} {
		if err := x.m.check(x.n); err != nil {
			return err
		}
	}
	if b.Rows != k || c.Rows != m || c.Cols != b.Cols {
		return fmt.Errorf("shapes do not match: A %dx%d, B %dx%d, C %dx%d",
			m, k, b.Rows, b.Cols, c.Rows, c.Cols)
	}
	if err := checkValues("A", a, precision); err != nil {
		return err
	}
	if err := checkValues("B", b, precision); err != nil {
		return err
	}
	if precision == INT8 {
		for i, v := range c.Data {
			if v != float32(math.Trunc(float64(v))) || math.Abs(float64(v)) > 1<<31-1 {
				return fmt.Errorf("C[%d][%d] = %g is not an int32", i/c.Cols, i%c.Cols, v)
			}
		}
	}
	return nil
}

func checkOperandsSp(a *Compressed, b, c Matrix, precision Precision) error {
	kept := Matrix{Rows: a.Rows, Cols: a.KeptCols(), Data: a.Values}
	return checkOperands(kept, b, c, a.Rows, a.Cols, precision)
}

func checkValues(name string, m Matrix, precision Precision) error {
	for i, v := range m.Data {
		if !Representable(v, precision) || (precision == INT8 && math.IsNaN(float64(v))) {
			return fmt.Errorf("%s[%d][%d] = %g is not a %s value (round it with RoundTo)",
				name, i/m.Cols, i%m.Cols, v, precision)
		}
	}
	return nil
}
