package energy

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// The encodings against values from the IEEE 754 binary16 tables.
func TestHalfEncoding(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want uint16
	}{{1, 0x3c00}, {-2, 0xc000}, {0.1, 0x2e66}, {65504, 0x7bff}, {1e-8, 0},
		{6e-8, 0x0001}, {0.333251953125, 0x3555}, {1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}} {
		if got := half(c.v); got != c.want {
			t.Errorf("half(%g) = %#04x, want %#04x", c.v, got, c.want)
		}
		if back := half(halfValue(c.want)); back != c.want {
			t.Errorf("half(halfValue(%#04x)) = %#04x: decoding does not invert", c.want, back)
		}
	}
}

// Toggle rates worked by hand from the bit marginals (rate = mean over
// bits of 2 p (1 - p)), and the normal distribution's against a Monte
// Carlo estimate made apart (numpy: 2e6 torch.randn-like fp16 draws,
// consecutive XOR popcounts / 16 = 0.4287).
func TestToggleRates(t *testing.T) {
	third, sixth := 1.0/3, 1.0/6
	for _, c := range []struct {
		o    Operands
		p    tensorcore.Precision
		want float64
		tol  float64
	}{
		// {-2..2} with 0 twice as likely (CUTLASS's uniform(-3, 3)
		// truncated): bits 15, 14 and 13..10 each set with p = 1/3; six
		// bits x 4/9 / 16 = 1/6.
		{Operands{Values: []float64{-2, -1, 0, 1, 2}, Probs: []float64{sixth, sixth, third, sixth, sixth}},
			tensorcore.FP16, 1.0 / 6, 1e-12},
		// {-2..2} uniform: p = 2/5 on the same six bits: 6 x 0.48 / 16.
		{Operands{Values: []float64{-2, -1, 0, 1, 2}, Probs: []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
			tensorcore.FP16, 0.18, 1e-12},
		// constant operands never toggle
		{Operands{Values: []float64{1.5}, Probs: []float64{1}}, tensorcore.BF16, 0, 0},
		{Operands{Normal: true}, tensorcore.FP16, 0.4287, 0.002},
	} {
		got, err := ToggleRate(c.o, c.p)
		if err != nil || math.Abs(got-c.want) > c.tol {
			t.Errorf("%+v in %s: %g (%v), want %g", c.o, c.p, got, err, c.want)
		}
	}
	// Every int8 code equally likely: every bit is a fair coin, 0.5.
	var u Operands
	for v := -128; v <= 127; v++ {
		u.Values = append(u.Values, float64(v))
		u.Probs = append(u.Probs, 1.0/256)
	}
	if got, err := ToggleRate(u, tensorcore.INT8); err != nil || math.Abs(got-0.5) > 1e-12 {
		t.Errorf("uniform int8: %g (%v), want 0.5", got, err)
	}
	// bf16 and tf32 randn: fewer mantissa bits than fp16, so lower.
	bf, _ := ToggleRate(Operands{Normal: true}, tensorcore.BF16)
	fp, _ := ToggleRate(Operands{Normal: true}, tensorcore.FP16)
	if !(bf > 0.2 && bf < fp) {
		t.Errorf("bf16 randn %g, fp16 %g: want bf16 lower, above 0.2", bf, fp)
	}
	for _, bad := range []Operands{{Values: []float64{1}, Probs: []float64{0.5}},
		{Values: []float64{0.5}, Probs: []float64{1}}, {Normal: true}} {
		if _, err := ToggleRate(bad, tensorcore.INT8); err == nil {
			t.Errorf("%+v in int8: no error", bad)
		}
	}
}
