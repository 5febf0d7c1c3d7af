package tensorcore

import (
	"fmt"
	"math/rand"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// BenchmarkFunctionalMMA: one instruction-level mma (m16n8k16) and mma.sp
// (m16n8k32, selector mux) on fp16, and a 128x128x128 tile of each.
func BenchmarkFunctionalMMA(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	for _, s := range []struct{ m, n, k int }{{16, 8, 32}, {128, 128, 128}} {
		a := randomSparse(rng, s.m, s.k, Pattern{2, 4}, FP16)
		ca, _ := Compress(a, Pattern{2, 4})
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

// BenchmarkUnit measures the timing model's speed in simulated MMAs per
// wall-clock second: each iteration runs 64 tensor cores, each with runs
// of `run` back-to-back sparse fp16 MMAs (4096 MMAs per core in total).
func BenchmarkUnit(b *testing.B) {
	for _, fid := range []string{"batched", "instruction"} {
		for _, run := range []int{1, 32, 4096} {
			b.Run(fmt.Sprintf("%s/run%d", fid, run), func(b *testing.B) {
				cfg := a100(fid)
				total := 0
				for i := 0; i < b.N; i++ {
					total += simulateRuns(b, cfg, 64, 4096/run, run)
				}
				b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "MMAs/s")
			})
		}
	}
}

// simulateRuns drives `units` tensor cores, each with `runs` runs of `n`
// MMAs, the next run submitted when the previous one has issued (as a warp
// does); it returns the MMAs simulated.
func simulateRuns(b *testing.B, cfg Config, units, runs, n int) int {
	e := akita.NewSerialEngine()
	clk := clock.MHz(1410)
	for i := 0; i < units; i++ {
		u := MakeBuilder().WithEngine(e).WithFreq(clk.Freq).WithConfig(cfg).
			Build(fmt.Sprintf("GPU.SM[%d].TC[0]", i))
		left := runs
		var next func(c uint64)
		next = func(c uint64) {
			if left == 0 {
				return
			}
			left--
			u.Submit(c, Request{Mode: Sparse, Precision: FP16, Count: n, Issued: next})
		}
		e.Schedule(clock.NewEvent(0, kick{fn: func() { next(0) }}, nil))
	}
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	return units * runs * n
}
