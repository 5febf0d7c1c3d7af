package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
)

// More work (deeper K) costs more energy in the MMAs, and more bytes moved
// costs more in DRAM, L2 and the crossbar; a GEMM of the same work that
// moves fewer DRAM bytes spends less in DRAM. One pinned kernel on 16
// SMs: the energy accounting, not the selection, is under test.
func TestEnergyGrowsWithWorkAndBytes(t *testing.T) {
	t.Parallel()
	rep := run(t, gemmJob([3]int{512, 1024, 512}, [3]int{512, 1024, 1024}),
		"kernel.force=128x128x64_64x64_s3", "gpu.sm_count=16")
	small, deep := rep.Results[0], rep.Results[2]
	if !(deep.EnergyUJ > small.EnergyUJ && deep.Energy.MMA > small.Energy.MMA) {
		t.Errorf("twice the K: energy %g -> %g uJ, MMA %g -> %g uJ",
			small.EnergyUJ, deep.EnergyUJ, small.Energy.MMA, deep.Energy.MMA)
	}
	moved := func(r LayerResult) uint64 { return r.DRAMReadBytes + r.DRAMWriteBytes }
	if moved(deep) <= moved(small) || deep.Energy.DRAM <= small.Energy.DRAM ||
		deep.Energy.L2 <= small.Energy.L2 || deep.Energy.Crossbar <= small.Energy.Crossbar {
		t.Errorf("more bytes (%d -> %d) without more memory energy: %+v -> %+v",
			moved(small), moved(deep), small.Energy, deep.Energy)
	}
	for _, r := range rep.Results {
		if math.Abs(r.Energy.Total()-r.EnergyUJ) > 1e-6*r.EnergyUJ {
			t.Errorf("%s: breakdown sums to %g, energy_uj %g", r.Layer,
				r.Energy.Total(), r.EnergyUJ)
		}
		if w := r.EnergyUJ / r.TimeUS; math.Abs(w-r.AvgPowerW) > 1e-9*w {
			t.Errorf("%s: avg_power_w %g, energy/time %g", r.Layer, r.AvgPowerW, w)
		}
	}
}

// The CUDA-core GEMV pays its FP32 datapath: every product of an M x N x K
// GEMV is one FFMA lane (its conversions to FP32 add more), so its fp32
// energy is at least power.energy.fp32_pj_per_op x M x N x K; the
// tensor-core kernel of the same GEMM has none; and the key scales it.
func TestGEMVPaysItsFP32Datapath(t *testing.T) {
	t.Parallel()
	const m, n, k, pj = 2048, 2, 1024, 0.83
	gemv := func(sets ...string) LayerResult {
		job := gemmJob([3]int{m, n, k})
		job.Modes = []tensorcore.Mode{tensorcore.Dense}
		sets = append([]string{"gpu.sm_count=16", "power.energy.fp32_pj_per_op=0.83"}, sets...)
		return run(t, job, sets...).Results[0]
	}
	g := gemv("kernel.force=" + configs.GEMVName)
	if floor := pj * m * n * k * 1e-6; g.Energy.FP32 < floor {
		t.Errorf("GEMV fp32 energy %g uJ, below its products' %g uJ", g.Energy.FP32, floor)
	}
	if hi := gemv("kernel.force="+configs.GEMVName, "power.energy.fp32_pj_per_op=1.66"); math.Abs(hi.Energy.FP32-2*g.Energy.FP32) > 1e-9*hi.Energy.FP32 ||
		hi.EnergyUJ <= g.EnergyUJ || hi.Cycles != g.Cycles {
		t.Errorf("fp32_pj_per_op doubled: fp32 %g -> %g uJ, total %g -> %g uJ, cycles %d -> %d",
			g.Energy.FP32, hi.Energy.FP32, g.EnergyUJ, hi.EnergyUJ, g.Cycles, hi.Cycles)
	}
	if tc := gemv("kernel.force=64x64x64_32x32_s6"); tc.Energy.FP32 != 0 {
		t.Errorf("tensor-core kernel: fp32 energy %g uJ, want 0", tc.Energy.FP32)
	}
}

// A sparse GEMM that saves time shows where its energy went: fewer
// multiplies (MMA energy about half), metadata decode and selector muxes
// that the dense kernel does not have, and more shared-memory and
// register-file energy per multiply (B still moves at full size).
func TestSparseEnergySplit(t *testing.T) {
	t.Parallel()
	// The split is per MMA and per byte: 16 SMs show it as 108 did, on a
	// quarter of 2048x2048x1024's work.
	rep := runShared(t, gemmJob([3]int{1024, 1024, 1024}), "gpu.sm_count=16") // TestFastFidelityDrivesTheModel's
	d, s := rep.Results[0], rep.Results[1]
	if s.Speedup <= 1 {
		t.Fatalf("sparse not faster (speedup %g): pick another shape", s.Speedup)
	}
	if r := s.Energy.MMA / d.Energy.MMA; r < 0.45 || r > 0.55 {
		t.Errorf("sparse MMA energy %.3f of dense, want about half", r)
	}
	if d.Energy.Metadata != 0 || s.Energy.Metadata <= 0 {
		t.Errorf("metadata energy: dense %g, sparse %g", d.Energy.Metadata,
			s.Energy.Metadata)
	}
	per := func(r LayerResult, v float64) float64 { return v / r.Energy.MMA }
	if per(s, s.Energy.Smem) <= per(d, d.Energy.Smem) ||
		per(s, s.Energy.RegisterFile) <= per(d, d.Energy.RegisterFile) {
		t.Errorf("operand delivery per multiply not higher for sparse: %+v vs %+v",
			s.Energy, d.Energy)
	}
	if want := d.EnergyUJ / s.EnergyUJ; math.Abs(s.EnergySaving-want) > 1e-12 ||
		s.EnergySaving <= 1 {
		t.Errorf("energy_saving %g, want %g (> 1)", s.EnergySaving, want)
	}
	tot := rep.Totals[1]
	if math.Abs(tot.EnergyUJ-s.EnergyUJ) > 1e-9*s.EnergyUJ || tot.EnergySaving != s.EnergySaving {
		t.Errorf("sparse total %+v does not match its one layer %+v", tot.TotalPower, s.Power)
	}
}

// locked runs at gpu.clock_mhz; power_capped with a limit no kernel reaches
// gives the same cycles bit for bit (the capped path re-times nothing).
func TestLockedAndUnreachedCapKeepCycles(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 1024, 512})
	locked := runShared(t, job) // TestRunIsDeterministic's run
	free := run(t, job, "gpu.clock_policy=power_capped", "power.limit_w=5000")
	for i, r := range locked.Results {
		if r.ClockMHz != 1410 || free.Results[i].ClockMHz != 1410 ||
			free.Results[i].Cycles != r.Cycles {
			t.Errorf("%s: locked %d cycles at %d MHz, uncapped %d at %d", r.Mode,
				r.Cycles, r.ClockMHz, free.Results[i].Cycles, free.Results[i].ClockMHz)
		}
	}
}

// Under power_capped a long tensor-bound GEMM runs at a clock no higher
// than a short one (whose fill and tail lower its average power), within
// the limit, and a limit no clock meets says so. One kernel for both
// (the clock search, not the selection, is under test), on 16 SMs under
// a 90 W limit: at the locked 1410 MHz the long GEMM (512x1024x2048,
// one wave of two CTAs per SM) draws about 100 W there, as
// 2048x4096x2048 drew above 400 W on 108 SMs.
func TestPowerCappedClocks(t *testing.T) {
	t.Parallel()
	const limit = 90
	job := gemmJob([3]int{512, 512, 512}, [3]int{512, 1024, 2048})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	rep := run(t, job, "gpu.clock_policy=power_capped", "sim.extrapolate_waves=true",
		"kernel.force=128x128x32_64x64_s5", "gpu.sm_count=16", "power.limit_w=90")
	short, long := rep.Results[0], rep.Results[1]
	if long.ClockMHz >= 1410 || long.AvgPowerW > limit {
		t.Errorf("long GEMM at %d MHz, %.0f W: the cap should bind", long.ClockMHz,
			long.AvgPowerW)
	}
	if short.ClockMHz < long.ClockMHz {
		t.Errorf("short GEMM at %d MHz below the long one's %d", short.ClockMHz,
			long.ClockMHz)
	}
	low := run(t, gemmJob([3]int{512, 1024, 512}), "gpu.clock_policy=power_capped",
		"power.limit_w=1", "gpu.sm_count=16")
	r := low.Results[0]
	if r.ClockMHz != 210 || !strings.Contains(r.Note, "power.limit_w") {
		t.Errorf("unreachable limit: %d MHz, note %q", r.ClockMHz, r.Note)
	}
}
