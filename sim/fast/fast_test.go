package fast_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
)

func config(t testing.TB, sets ...string) *configs.Config {
	t.Helper()
	ld, err := configs.Load(nil, append([]string{"gpu.sm_count=16"}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	return ld.Config
}

func shape(m, n, k int, sparse bool) kernel.Shape {
	g := kernel.Shape{M: m, N: n, K: k, Batch: 1, Precision: tensorcore.FP16}
	if sparse {
		g.Sparse, g.Pattern = true, tensorcore.Pattern{N: 2, M: 4}
	}
	return g
}

// best is the plan the selection's pre-model ranks first.
func best(t testing.TB, cfg *configs.Config, g kernel.Shape) *kernel.Plan {
	t.Helper()
	plans, rejected := selection.Rank(cfg, g)
	if len(plans) == 0 {
		t.Fatalf("no plan for %+v: %v", g, rejected)
	}
	return plans[0]
}

// The fast tier against the instruction-level SM, per GEMM, on 16 SMs.
// measuredBound is the largest error this family showed; the test fails
// if any GEMM is further off.
func TestAgreesWithInstructionTier(t *testing.T) {
	const measuredBound = 0.12
	cfg := config(t)
	for _, s := range [][3]int{{1024, 1024, 1024}, {2048, 2048, 512}, {256, 4096, 1024}} {
		for _, sparse := range []bool{false, true} {
			g := shape(s[0], s[1], s[2], sparse)
			p := best(t, cfg, g)
			want, err := gpu.Simulate(cfg, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fast.Time(cfg, p)
			if err != nil {
				t.Fatal(err)
			}
			e := float64(got.Cycles)/float64(want.Cycles) - 1
			t.Logf("%dx%dx%d sparse=%v %s: fast %d, instruction %d (%+.1f %%)",
				s[0], s[1], s[2], sparse, p.Name(), got.Cycles, want.Cycles, 100*e)
			if math.Abs(e) > measuredBound {
				t.Errorf("%s: error %.1f %% over the measured %.1f %%", p.Name(), 100*e, 100*measuredBound)
			}
		}
	}
}

// More L2 or DRAM bandwidth never makes a kernel slower.
func TestMoreBandwidthNeverSlower(t *testing.T) {
	g := shape(2048, 2048, 2048, true)
	base := config(t)
	p := best(t, base, g)
	ref, err := fast.Time(base, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"memory.l2.bytes_per_clk=%d", "memory.dram.bandwidth_gbps=%d"} {
		v := base.Memory.L2.BytesPerClk
		if set[7:9] == "dr" {
			v = int(base.Memory.DRAM.BandwidthGBps)
		}
		r, err := fast.Time(config(t, fmt.Sprintf(set, 2*v)), p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cycles > ref.Cycles {
			t.Errorf("%s: %d cycles at twice the bandwidth, %d at base", set, r.Cycles, ref.Cycles)
		}
	}
}

func TestRefusesKSample(t *testing.T) {
	cfg := config(t)
	p := best(t, cfg, shape(1024, 1024, 4096, false)).WithKSteps(2)
	if _, err := fast.Time(cfg, p); err == nil {
		t.Error("a K sample was timed as a kernel")
	}
}
