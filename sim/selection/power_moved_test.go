package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// Moved from package sim: re-timing a selected kernel at another clock
// (configAt, what CapClock tries).

// Re-timing at a lower SM clock keeps the memory clock domains: a
// memory-heavy kernel takes fewer SM cycles (DRAM delivers the same GB/s
// and its latency the same nanoseconds) but no less time.
func TestRetimingKeepsMemoryTime(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := kernel.Shape{M: 2048, N: 64, K: 2048, Batch: 1, Precision: tensorcore.FP16}
	hi, err := Select(ld.Config, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	lo, err := gpu.Simulate(configAt(ld.Config, 705), hi.Plan, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sec := func(k *gpu.Result) float64 { return float64(k.Cycles) / float64(k.ClockMHz) }
	if lo.ClockMHz != 705 || lo.Cycles >= hi.Cycles || sec(lo) < sec(hi) {
		t.Errorf("705 MHz: %d cycles; 1410 MHz: %d cycles", lo.Cycles, hi.Cycles)
	}
	if lo.Act.DRAMBytes != hi.Act.DRAMBytes || lo.Act.DenseFMAs != hi.Act.DenseFMAs {
		t.Errorf("the same kernel did different work at two clocks: %+v vs %+v",
			lo.Act, hi.Act)
	}
}
