package fast_test

import (
	"testing"

	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sim/gpu"
)

// The speed-up of the fast tier is the ratio of these two on one GEMM
// (1024^3 2:4 sparse FP16, 16 SMs).
func BenchmarkFastTime(b *testing.B) {
	cfg := config(b)
	p := best(b, cfg, shape(1024, 1024, 1024, true))
	for b.Loop() {
		if _, err := fast.Time(cfg, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInstructionTime(b *testing.B) {
	cfg := config(b)
	p := best(b, cfg, shape(1024, 1024, 1024, true))
	for b.Loop() {
		if _, err := gpu.Simulate(cfg, p, gpu.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
