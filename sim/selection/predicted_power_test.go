package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestPredictedPowerSidesWithTheRun: the pre-model's power
// (PredictedPower), which decides whether the work estimate counts a
// locked run's power-capped re-timing, falls on the same side of
// power.limit_w as the simulated kernel's on 16 SMs under 90 W (as
// sim's power tests): a dense compute-bound GEMM above it, its 2:4 twin
// and a memory-bound skinny GEMM below, and within 15 % of the simulated
// power on each.
func TestPredictedPowerSidesWithTheRun(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"gpu.sm_count=16", "power.limit_w=90"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	for _, c := range []struct {
		m, n, k int
		sparse  bool
	}{{512, 1024, 2048, false}, {512, 1024, 2048, true}, {2048, 16, 2048, false}} {
		g := kernel.Shape{M: c.m, N: c.n, K: c.k, Batch: 1, Precision: tensorcore.FP16, Sparse: c.sparse}
		if c.sparse {
			g.Pattern = tensorcore.Pattern{N: 2, M: 4}
		}
		k, err := Select(cfg, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		sim, pred := kernelPower(cfg, k), PredictedPower(cfg, k.Plan)
		t.Logf("%dx%dx%d sparse=%v %s: simulated %.1f W, predicted %.1f W", c.m, c.n, c.k, c.sparse,
			k.Plan.Name(), sim, pred)
		if (sim > cfg.Power.LimitW) != (pred > cfg.Power.LimitW) {
			t.Errorf("%dx%dx%d sparse=%v: simulated %.1f W, predicted %.1f W: on either side of %.0f W",
				c.m, c.n, c.k, c.sparse, sim, pred, cfg.Power.LimitW)
		}
		if pred > 1.15*sim || pred < sim/1.15 {
			t.Errorf("%dx%dx%d sparse=%v: predicted %.1f W against %.1f W simulated", c.m, c.n, c.k,
				c.sparse, pred, sim)
		}
	}
}
