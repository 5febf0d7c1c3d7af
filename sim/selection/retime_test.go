package selection

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// probeRetimeTol is how far the probe re-timing (sim.retime_probe_ksteps)
// may put a kernel's cycles, capped time and energy from the whole
// re-timing's; the clock it picks may be one V/f step (power.clock_step_mhz)
// away. Where the whole re-timing's last CTAs land moves its cycles more
// than the clock does on a tensor-bound kernel (1024x1024x4096 below:
// -3.2 % at 1305 MHz against the locked run, where the probes say -0.3 %
// at 1320 MHz), so a closer bound would test where the last CTAs land.
const probeRetimeTol = 0.025

// TestProbeRetimeAgrees holds the probe re-timing to the whole one on
// 16 SMs. A DRAM-bound kernel (2048x64x4096 at 100 GB/s, 128 k-steps)
// re-timed at 1005 MHz runs 28 % fewer cycles than at the locked clock:
// the probe's must come within probeRetimeTol of the whole run's (the
// locked record itself would not). Three dense compute-bound kernels
// above a 90 W limit, pinned to the prefill's two-CTA-per-SM tile (the
// third of 5 waves, its probes extrapolated from 4), capped (CapClock)
// both ways: the same clock or one step apart, capped time and energy
// within probeRetimeTol.
func TestProbeRetimeAgrees(t *testing.T) {
	t.Parallel()
	within := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got/want-1) > probeRetimeTol {
			t.Errorf("%s: %.6g with probes, %.6g whole (%+.2f %%)", what, got, want, 100*(got/want-1))
		}
	}
	load := func(over ...string) *configs.Config {
		ld, err := configs.Load(nil, append([]string{"gpu.sm_count=16"}, over...))
		if err != nil {
			t.Fatal(err)
		}
		if ld.Config.Sim.RetimeProbeKSteps != 32 {
			t.Fatalf("sim.retime_probe_ksteps %d by default, want 32", ld.Config.Sim.RetimeProbeKSteps)
		}
		return ld.Config
	}
	sel := func(cfg *configs.Config, m, n, k int) *gpu.Result {
		r, err := Select(cfg, kernel.Shape{M: m, N: n, K: k, Batch: 1, Precision: tensorcore.FP16}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	energyOf := func(cfg *configs.Config, r *gpu.Result) float64 {
		b, err := cfg.Power.Energy(r.Act, r.Cycles, r.ClockMHz)
		if err != nil {
			t.Fatal(err)
		}
		return b.Total()
	}
	whole := func(cfg *configs.Config) *configs.Config {
		c := *cfg
		c.Sim.RetimeProbeKSteps = 0
		return &c
	}

	cfg := load("dram.bandwidth_gbps=100")
	k := sel(cfg, 2048, 64, 4096)
	p, err := retimerFor(cfg, k, nil)(1005)
	if err != nil {
		t.Fatal(err)
	}
	w, err := retimerFor(whole(cfg), k, nil)(1005)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2048x64x4096 %s at 1005 MHz: locked %d, probes %d, whole %d cycles",
		k.Plan.Name(), k.Cycles, p.Cycles, w.Cycles)
	if p.ProbeKSteps != 32 || w.ProbeKSteps != 0 {
		t.Fatalf("probe k-steps %d and %d, want 32 and 0", p.ProbeKSteps, w.ProbeKSteps)
	}
	if float64(w.Cycles) > 0.8*float64(k.Cycles) {
		t.Errorf("whole re-timing %d cycles against %d locked: not DRAM-bound enough to test", w.Cycles, k.Cycles)
	}
	within("DRAM-bound cycles", float64(p.Cycles), float64(w.Cycles))
	within("DRAM-bound energy", energyOf(cfg, p), energyOf(cfg, w))
	within("DRAM-bound DRAM reads", float64(p.Mem.DRAMReadBytes), float64(w.Mem.DRAMReadBytes))

	for _, c := range []struct {
		m, n, k int
		over    []string
	}{{1024, 1024, 4096, nil}, {2048, 1024, 2048, []string{"dram.bandwidth_gbps=150"}},
		{1024, 2560, 2048, nil}} {
		cfg := load(append([]string{"power.limit_w=90", "kernel.force=128x128x32_64x64_s5"}, c.over...)...)
		k := sel(cfg, c.m, c.n, c.k)
		p, err := CapClock(cfg, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := CapClock(whole(cfg), k, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%dx%dx%d: locked %d cycles %.1f W; probes %d MHz %d cycles; whole %d MHz %d cycles",
			c.m, c.n, c.k, k.Cycles, kernelPower(cfg, k), p.ClockMHz, p.Cycles, w.ClockMHz, w.Cycles)
		if p.ClockMHz == k.ClockMHz || p.ProbeKSteps == 0 {
			t.Fatalf("%dx%dx%d: not re-timed from probes (%d MHz)", c.m, c.n, c.k, p.ClockMHz)
		}
		if d := p.ClockMHz - w.ClockMHz; d > cfg.Power.ClockStepMHz || -d > cfg.Power.ClockStepMHz {
			t.Errorf("%dx%dx%d: capped at %d MHz with probes, %d whole", c.m, c.n, c.k, p.ClockMHz, w.ClockMHz)
		}
		_, extrapolated := gpu.ExtrapolatedLaunch(cfg, probeOf(cfg, k.Plan), 16*k.Plan.Occupancy)
		if waves := k.Plan.Waves(16); extrapolated != (waves >= 5) {
			t.Errorf("%dx%dx%d: %d waves, probe extrapolated %v", c.m, c.n, c.k, waves, extrapolated)
		}
		us := func(r *gpu.Result) float64 { return float64(r.Cycles) / float64(r.ClockMHz) }
		within("capped time", us(p), us(w))
		within("capped energy", energyOf(cfg, p), energyOf(cfg, w))
	}
}
