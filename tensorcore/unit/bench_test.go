package unit

import (
	"fmt"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/tensorcore"
)

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
func simulateRuns(b *testing.B, cfg tensorcore.Config, units, runs, n int) int {
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
			u.Submit(c, Request{Mode: tensorcore.Sparse, Precision: tensorcore.FP16, Count: n, Issued: next})
		}
		e.Schedule(clock.NewEvent(0, kick{fn: func() { next(0) }}, nil))
	}
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	return units * runs * n
}
