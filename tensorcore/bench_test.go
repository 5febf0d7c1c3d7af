package tensorcore

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkFunctionalMMA: one instruction-level mma (m16n8k16) and mma.sp
// (m16n8k32, selector mux) on fp16, and a 128x128x128 tile of each.
func BenchmarkFunctionalMMA(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	for _, s := range []struct{ m, n, k int }{{16, 8, 32}, {128, 128, 128}} {
		a := randomSparse(rng, s.m, s.k, Pattern{N: 2, M: 4}, FP16)
		ca, _ := Compress(a, Pattern{N: 2, M: 4})
		bm := randomDense(rng, s.k, s.n, FP16)
		c := NewMatrix(s.m, s.n)
		dk := s.k
		if s.m == 16 {
			dk = 16 // the dense instruction has half the K
		}
		ad := randomDense(rng, s.m, dk, FP16)
		bd := randomDense(rng, dk, s.n, FP16)
		b.Run(fmt.Sprintf("sparse_m%dn%dk%d", s.m, s.n, s.k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := MMASp(ca, bm, c, FP16); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("dense_m%dn%dk%d", s.m, s.n, dk), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := MMA(ad, bd, c, FP16); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
