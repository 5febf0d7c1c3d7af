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

// family is the GEMMs the tiers are compared over: M, N, K each 256,
// 1024 or 4096 (skinny ones included), dense and 2:4 sparse FP16.
func family() []kernel.Shape {
	var out []kernel.Shape
	dims := []int{256, 1024, 4096}
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range dims {
				out = append(out, shape(m, n, k, false), shape(m, n, k, true))
			}
		}
	}
	return out
}

// relErr is fast's error against the instruction tier's cycles.
func relErr(t *testing.T, cfg *configs.Config, p *kernel.Plan) (float64, uint64, uint64) {
	t.Helper()
	want, err := gpu.Simulate(cfg, p, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fast.Time(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return float64(got.Cycles)/float64(want.Cycles) - 1, got.Cycles, want.Cycles
}

// A short family of the long tier's comparison (fast_long_test.go):
// six GEMMs, dense and sparse, errors -1.1 to -7.0 %, mean |error|
// 4.72 %, measured 2026-12-04, so the bounds are 8 % each and 5.5 %
// on the mean. Each is held to the tier's stated per-kernel error too
// (fast.FamilyError's worst, what every fast record carries), so that
// what config show prints cannot be below what the default tests see
// of a kernel. Their mean is not held to the family's (4.74 % over 54
// GEMMs): six of them are a sample, not the family.
func TestAgreesOnShortFamily(t *testing.T) {
	cfg := config(t)
	sum, n := 0.0, 0
	for _, s := range [][3]int{{1024, 1024, 1024}, {2048, 2048, 512}, {256, 4096, 1024}} {
		for _, sparse := range []bool{false, true} {
			p := best(t, cfg, shape(s[0], s[1], s[2], sparse))
			e, got, want := relErr(t, cfg, p)
			t.Logf("%v sparse=%v %s: fast %d, instruction %d (%+.1f %%)", s, sparse, p.Name(), got, want, 100*e)
			if math.Abs(e) > 0.08 {
				t.Errorf("%s: error %.1f %% over the measured 8 %%", p.Name(), 100*e)
			}
			if stated := fast.FamilyError.WorstPct(); 100*math.Abs(e) > stated {
				t.Errorf("%s: error %.1f %% over the stated %.1f %% (fast.FamilyError)",
					p.Name(), 100*e, stated)
			}
			sum, n = sum+math.Abs(e), n+1
		}
	}
	if mape := 100 * sum / float64(n); mape > 5.5 {
		t.Errorf("mean |error| %.2f %% over the measured 5.5 %%", mape)
	} else {
		t.Logf("mean |error| %.2f %%", mape)
	}
}

// A sparse-datapath sweep keeps its order: both tiers rank four B
// operand widths the same (ties in the instruction tier allow either
// order in the fast one).
func TestSweepOrderPreserved(t *testing.T) {
	// 8 SMs with 16 CTAs each, as 2048x2048x1024 on 16 SMs (the same
	// fast-tier cycles), at half the CTAs.
	g := shape(1024, 2048, 1024, true)
	widths := []int{16, 32, 64, 128}
	var fastC, instC []uint64
	for _, w := range widths {
		cfg := config(t, "gpu.sm_count=8", fmt.Sprintf("tensorcore.fp16.b_operand_bytes_per_clk=%d", w))
		p := best(t, cfg, g)
		_, got, want := relErr(t, cfg, p)
		fastC, instC = append(fastC, got), append(instC, want)
	}
	t.Logf("b_bytes_per_clk %v: fast %v, instruction %v", widths, fastC, instC)
	for i := range widths {
		for j := range widths {
			if instC[i] < instC[j] && fastC[i] > fastC[j] {
				t.Errorf("instruction tier: %d B/clk faster than %d; fast tier: slower",
					widths[i], widths[j])
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
	for set, v := range map[string]int{
		"l2.bytes_per_clk=%d":    base.Memory.L2.BytesPerClk,
		"dram.bandwidth_gbps=%d": int(base.Memory.DRAM.BandwidthGBps),
	} {
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

// Schedules the tier does not model are refused, not mistimed.
func TestRefusesOtherSchedules(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	plans, _ := selection.Rank(cfg, shape(1024, 1024, 1024, false))
	if len(plans) == 0 {
		t.Fatal("no plan")
	}
	p := *plans[0]
	if _, err := fast.Time(cfg, &p); err != nil {
		t.Fatalf("data-parallel plan refused: %v", err)
	}
	for _, s := range []kernel.Schedule{kernel.SerialSplitK, kernel.StreamK} {
		p.Schedule = s
		if _, err := fast.Time(cfg, &p); err == nil {
			t.Errorf("schedule %s timed", s)
		}
	}
}

// scaledDRAM is the A100's DRAM bandwidth per SM on 16 SMs.
const scaledDRAM = "dram.bandwidth_gbps=230"

// A GEMM whose D is larger than the L2 (K = 64: two k-steps a CTA, the
// epilogue's write of D most of the work) against the full instruction
// tier (no wave extrapolation), on the A100 scaled down to 16 SMs
// (DRAM bandwidth 16/108 of 1555 GB/s, so that the SMs' ports outrun
// DRAM as the A100's do), with an L2 of 2.5 MiB (D is 4 MiB) and of
// 40 MiB, where D stays in L2. The fast tier agrees within 12 % at both
// (measured 2026-12-04: -11.1 % and +5.9 %), and both tiers find the
// small L2 slower.
func TestOutputBeyondL2(t *testing.T) {
	g := shape(256, 8192, 64, false)
	var fastC, instC []uint64
	for _, kb := range []int{2560, 40960} {
		cfg := config(t, fmt.Sprintf("l2.size_kb=%d", kb), scaledDRAM, "sim.extrapolate_waves=false")
		p := best(t, cfg, g)
		e, got, want := relErr(t, cfg, p)
		t.Logf("l2.size_kb=%d %s: fast %d, instruction %d (%+.1f %%)", kb, p.Name(), got, want, 100*e)
		if math.Abs(e) > 0.12 {
			t.Errorf("l2.size_kb=%d: error %+.1f %% over 12 %%", kb, 100*e)
		}
		fastC, instC = append(fastC, got), append(instC, want)
	}
	if instC[0] <= instC[1] || fastC[0] <= fastC[1] {
		t.Errorf("the small L2 is not slower in both tiers: fast %v, instruction %v", fastC, instC)
	}
}

// Every key the fast tier reads on the write path of D moves it as it
// moves the instruction tier, on a GEMM whose D overflows the L2: where
// the instruction tier is more than 2 % slower (a smaller L2, fewer
// write-back entries, a narrower crossbar port), the fast tier is
// slower too; where it is within 2 % (slower stores into the slices,
// which have time to spare at their peak rate, l2.efficiency 1), the
// fast tier moves by less than 5 %. At the calibrated efficiency 0.93
// a tenth of the store bandwidth makes the instruction tier 3.5 % slower
// and the fast tier 0.0 %: its slices are one aggregate bound, which
// the stores do not reach, where the instruction tier's slice queues
// bind first (docs/fast-paths.md).
func TestWritePathKeysMoveIt(t *testing.T) {
	g := shape(256, 8192, 64, false)
	sets := []string{"l2.size_kb=2560", scaledDRAM, "sim.extrapolate_waves=false", "l2.efficiency=1"}
	base := config(t, sets...)
	p := best(t, base, g)
	_, refFast, refInst := relErr(t, base, p)
	for _, set := range []string{"l2.size_kb=1280", "l2.write_ratio=0.1",
		"l2.writeback_entries=1", "crossbar.port_bytes_per_clk=16"} {
		_, got, want := relErr(t, config(t, append(sets, set)...), p)
		df, di := float64(got)/float64(refFast)-1, float64(want)/float64(refInst)-1
		t.Logf("%s: fast %d (%+.1f %%), instruction %d (%+.1f %%)", set, got, 100*df, want, 100*di)
		if (di > 0.02 && df <= 0) || (math.Abs(di) <= 0.02 && math.Abs(df) >= 0.05) {
			t.Errorf("%s: fast %+.1f %%, instruction %+.1f %%", set, 100*df, 100*di)
		}
	}
}

// The slices' store bandwidth (l2.write_ratio) bounds a kernel whose
// slices are its bottleneck: at a tenth of the read bandwidth, on the
// A100's 108 SMs, a K = 64 GEMM writing 51 MB of D is slower.
func TestWriteRatioBoundsSlices(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := shape(256, 100352, 64, false)
	p := best(t, ld.Config, g)
	ref, err := fast.Time(ld.Config, p)
	if err != nil {
		t.Fatal(err)
	}
	ld, err = configs.Load(nil, []string{"l2.write_ratio=0.1"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := fast.Time(ld.Config, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d cycles at l2.write_ratio=0.1, %d at 1", p.Name(), r.Cycles, ref.Cycles)
	if r.Cycles <= ref.Cycles {
		t.Errorf("l2.write_ratio=0.1: %d cycles, %d at 1", r.Cycles, ref.Cycles)
	}
}

// gemvPlan is the CUDA-core GEMV of an M x N x K fp16 GEMM.
func gemvPlan(t testing.TB, cfg *configs.Config, s [3]int) *kernel.Plan {
	t.Helper()
	p, err := kernel.NewGEMV(cfg, shape(s[0], s[1], s[2], false))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Three decode GEMVs of the long tier's comparison (TestAgreesOnGEMVs)
// on 108 SMs, DRAM-, FP32-pipe- and latency-bound: measured +0.3, -5.9
// and +0.0 % on 2026-12-07 (docs/log/2026-12-07-gemv.md), so each is
// held to 8 %, and to the stated fast.GEMVError.
func TestAgreesOnShortGEMVs(t *testing.T) {
	cfg := config(t, "gpu.sm_count=108")
	for _, s := range [][3]int{{1024, 1, 4096}, {1024, 8, 4096}, {256, 2, 11008}} {
		e, got, want := relErr(t, cfg, gemvPlan(t, cfg, s))
		t.Logf("%v: fast %d, instruction %d (%+.1f %%)", s, got, want, 100*e)
		if math.Abs(e) > 0.08 || 100*math.Abs(e) > fast.GEMVError.WorstPct() {
			t.Errorf("%v: error %.1f %% over the measured 8 %% or the stated %.1f %%",
				s, 100*e, fast.GEMVError.WorstPct())
		}
	}
}
