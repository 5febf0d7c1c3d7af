package energy

import (
	"fmt"
	"math"
	"slices"

	"github.com/stcsim/stcsim/tensorcore"
)

// The data activity (power.data_activity) is the probability that an
// operand bit differs between two operands the tensor core's multipliers
// take one after the other. Operands of a GEMM are elements of its
// matrices, so consecutive ones are independent draws from the values'
// distribution, and bit b differs with probability 2 p_b (1 - p_b), where
// p_b is the probability that bit b of the encoding is set. ToggleRate is
// the mean of that over the encoding's bits: 0.5 for uniformly random
// bits, less for values whose exponents cluster or whose mantissas end in
// zeros (small integers, the operands benchmark harnesses fill matrices
// with).

// Operands is a distribution of operand values: a discrete one (Values
// with their Probs) or, with Normal set, the standard normal distribution
// (torch.randn), rounded to the nearest encodable value.
type Operands struct {
	Name   string
	Values []float64
	Probs  []float64
	Normal bool
}

// ToggleRate is the operands' bit-toggle probability in precision p's
// encoding (fp16, bf16: 16 bits; tf32: the 19 bits of its format; int8:
// two's complement).
func ToggleRate(o Operands, p tensorcore.Precision) (float64, error) {
	enc, bitsN, err := encoder(p)
	if err != nil {
		return 0, err
	}
	ones := make([]float64, bitsN) // P(bit b set)
	switch {
	case o.Normal:
		if p == tensorcore.INT8 {
			return 0, fmt.Errorf("operands %s: a normal distribution has no int8 encoding", o.Name)
		}
		for _, vm := range normalMasses(p) {
			addBits(ones, vm.code, vm.mass)
		}
	default:
		if len(o.Values) == 0 || len(o.Values) != len(o.Probs) {
			return 0, fmt.Errorf("operands %s: %d values, %d probabilities", o.Name, len(o.Values), len(o.Probs))
		}
		total := 0.0
		for i, v := range o.Values {
			code, ok := enc(v)
			if !ok || o.Probs[i] < 0 {
				return 0, fmt.Errorf("operands %s: value %g (probability %g) not encodable in %s",
					o.Name, v, o.Probs[i], p)
			}
			addBits(ones, code, o.Probs[i])
			total += o.Probs[i]
		}
		if math.Abs(total-1) > 1e-9 {
			return 0, fmt.Errorf("operands %s: probabilities sum to %g, not 1", o.Name, total)
		}
	}
	rate := 0.0
	for _, q := range ones {
		rate += 2 * q * (1 - q)
	}
	return rate / float64(bitsN), nil
}

func addBits(ones []float64, code uint32, mass float64) {
	for b := range ones {
		if code>>b&1 == 1 {
			ones[b] += mass
		}
	}
}

// encoder is precision p's encoding of a value (rounded to nearest even
// for the float formats) and its width in bits.
func encoder(p tensorcore.Precision) (func(float64) (uint32, bool), int, error) {
	switch p {
	case tensorcore.FP16:
		return func(v float64) (uint32, bool) { return uint32(half(v)), !math.IsInf(v, 0) && !math.IsNaN(v) }, 16, nil
	case tensorcore.BF16:
		return func(v float64) (uint32, bool) { return roundF32(v, 16), !math.IsInf(v, 0) && !math.IsNaN(v) }, 16, nil
	case tensorcore.TF32:
		return func(v float64) (uint32, bool) { return roundF32(v, 13), !math.IsInf(v, 0) && !math.IsNaN(v) }, 19, nil
	case tensorcore.INT8:
		return func(v float64) (uint32, bool) {
			return uint32(uint8(int8(v))), v == math.Trunc(v) && v >= -128 && v <= 127
		}, 8, nil
	}
	return nil, 0, fmt.Errorf("no encoding for precision %s", p)
}

// roundF32 is v as float32 with its low drop mantissa bits rounded off
// (nearest even), shifted down: bf16 (drop 16) and tf32 (drop 13).
func roundF32(v float64, drop uint) uint32 {
	b := math.Float32bits(float32(v))
	half := uint32(1) << (drop - 1)
	lsb := b >> drop & 1
	return (b + half - 1 + lsb) >> drop
}

// half is v in IEEE 754 binary16, rounded to nearest even.
func half(v float64) uint16 {
	f := math.Float32bits(float32(v))
	sign := uint16(f>>16) & 0x8000
	exp := int(f>>23&0xff) - 127 + 15
	mant := f & 0x7fffff
	switch {
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		r := mant >> shift
		rem := mant & (1<<shift - 1)
		if h := uint32(1) << (shift - 1); rem > h || rem == h && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // may carry into the exponent, as rounding should
	}
	return sign | uint16(r)
}

type valueMass struct {
	code uint32
	mass float64
}

// normalMasses are the encodable values of p (16-bit formats and tf32)
// with the standard normal probability of rounding to each: every finite
// code, sorted by value, owns the interval between the midpoints to its
// neighbours.
func normalMasses(p tensorcore.Precision) []valueMass {
	type cv struct {
		v    float64
		code uint32
	}
	var all []cv
	switch p {
	case tensorcore.FP16:
		for c := 0; c < 1<<16; c++ {
			if v := halfValue(uint16(c)); !math.IsInf(v, 0) && !math.IsNaN(v) && c != 0x8000 {
				all = append(all, cv{v, uint32(c)})
			}
		}
	default: // bf16, tf32: the top bits of a float32
		drop := uint(16)
		if p == tensorcore.TF32 {
			drop = 13
		}
		for c := 0; c < 1<<(32-drop); c++ {
			v := float64(math.Float32frombits(uint32(c) << drop))
			if !math.IsInf(v, 0) && !math.IsNaN(v) && uint32(c)<<drop != 0x80000000 {
				all = append(all, cv{v, uint32(c)})
			}
		}
	}
	slices.SortFunc(all, func(a, b cv) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	out := make([]valueMass, 0, len(all))
	for i, e := range all {
		lo, hi := math.Inf(-1), math.Inf(1)
		if i > 0 {
			lo = (all[i-1].v + e.v) / 2
		}
		if i+1 < len(all) {
			hi = (e.v + all[i+1].v) / 2
		}
		if m := phi(hi) - phi(lo); m > 0 {
			out = append(out, valueMass{e.code, m})
		}
	}
	return out
}

// halfValue decodes an IEEE 754 binary16 code.
func halfValue(c uint16) float64 {
	sign := 1.0
	if c&0x8000 != 0 {
		sign = -1
	}
	exp := int(c >> 10 & 0x1f)
	mant := float64(c & 0x3ff)
	switch exp {
	case 0:
		return sign * mant * math.Ldexp(1, -24)
	case 31:
		if mant == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + mant/1024) * math.Ldexp(1, exp-15)
}
