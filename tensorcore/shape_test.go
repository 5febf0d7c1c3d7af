package tensorcore

import (
	"reflect"
	"testing"
)

// ParseShape takes the canonical mMnNkK form only.
func TestParseShape(t *testing.T) {
	for _, s := range []string{"m16n8k16", "m16n8k32", "m1n1k1", "m128n256k1024"} {
		sh, err := ParseShape(s)
		if err != nil || sh.String() != s {
			t.Errorf("%q: %v, %v", s, sh, err)
		}
	}
	for _, s := range []string{"", "m", "m16n8", "m16n8k", "16n8k16", "m16n8k16x",
		"m+16n8k16", "m016n8k16", "m-16n8k16", "m0n8k16", "m16k8n16", "m16 n8k16",
		"M16n8k16", "m16n8k99999999999999999999"} {
		if sh, err := ParseShape(s); err == nil {
			t.Errorf("%q: accepted as %v", s, sh)
		}
	}
}

// Derive hands out what derive gives, the second time from its memo,
// and a caller editing its copy's stages changes no later answer.
func TestDeriveMemoIsDerive(t *testing.T) {
	cfg := a100("batched")
	for _, prec := range []Precision{FP16, BF16, TF32, INT8} {
		p, err := cfg.Get(prec)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			m   Mode
			pat Pattern
		}{{Dense, Pattern{}}, {Sparse, Pattern{N: 2, M: 4}}, {Sparse, Pattern{N: 1, M: 4}}, {DualSide, Pattern{N: 2, M: 4}}} {
			want, werr := derive(p, prec, c.m, c.pat, 0)
			for i := 0; i < 2; i++ {
				got, err := Derive(p, prec, c.m, c.pat, 0)
				if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s %v %v call %d: %+v, %v; derive gives %+v, %v",
						prec, c.m, c.pat, i, got, err, want, werr)
				}
				if len(got.Stages) > 0 {
					got.Stages[0].Fill += 1000
				}
			}
		}
	}
}
