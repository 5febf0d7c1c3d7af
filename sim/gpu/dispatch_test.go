package gpu

import (
	"testing"

	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// startCycles is the cycle each CTA starts at, and the kernel's end.
func startCycles(t *testing.T, sets ...string) (map[int]uint64, uint64) {
	t.Helper()
	cfg := loadTest(t, append([]string{"kernel.force=128x128x32_64x64_s5"}, sets...)...)
	g := kernel.Shape{M: 1024, N: 1536, K: 256, Batch: 1, Precision: tensorcore.FP16}
	gp, err := Build(cfg, pinnedPlan(t, cfg, "128x128x32_64x64_s5", g))
	if err != nil {
		t.Fatal(err)
	}
	starts := map[int]uint64{}
	gp.onStart = func(idx int, now uint64) { starts[idx] = now }
	if err := gp.Run(); err != nil {
		t.Fatal(err)
	}
	return starts, gp.EndCycle
}

// The dispatcher hands out one CTA per sm.cta_dispatch_interval: the
// first wave's CTAs start at distinct cycles, that far apart in dispatch
// order, and a slower dispatcher makes a one-wave kernel slower.
func TestCTADispatchRate(t *testing.T) {
	t.Parallel()
	starts, base := startCycles(t, "sm.cta_dispatch_interval=1")
	if len(starts) != 96 { // 8 x 12 tiles: one wave on 108 SMs
		t.Fatalf("%d CTAs started, want 96", len(starts))
	}
	seen := map[uint64]int{}
	for idx, c := range starts {
		if other, ok := seen[c]; ok {
			t.Errorf("CTAs %d and %d both start at cycle %d", other, idx, c)
		}
		seen[c] = idx
	}
	slowStarts, slow := startCycles(t, "sm.cta_dispatch_interval=40")
	if slow <= base {
		t.Errorf("dispatch interval 40: %d cycles, default %d: want slower", slow, base)
	}
	for idx := 1; idx < len(slowStarts); idx++ {
		if d := slowStarts[idx] - slowStarts[idx-1]; d != 40 {
			t.Errorf("CTAs %d and %d start %d cycles apart, want 40", idx-1, idx, d)
		}
	}
	_, free := startCycles(t, "sm.cta_dispatch_interval=0")
	if free > base {
		t.Errorf("no dispatch limit: %d cycles, default %d: want not slower", free, base)
	}
}

// With no GPU-wide limit, an SM still takes at most one CTA per cycle:
// its second slot fills a cycle after its first.
func TestCTADispatchOnePerSMPerCycle(t *testing.T) {
	t.Parallel()
	starts, _ := startCycles(t, "sm.cta_dispatch_interval=0", "gpu.sm_count=4")
	// 96 CTAs, occupancy 2 on 4 SMs: CTAs 0-3 and 4-7 are the first wave.
	for idx := 0; idx < 4; idx++ {
		if starts[idx+4] != starts[idx]+1 {
			t.Errorf("SM %d: slots start at %d and %d, want one cycle apart",
				idx, starts[idx], starts[idx+4])
		}
	}
}
