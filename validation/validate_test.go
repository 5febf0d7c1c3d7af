package validation

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

const smallPoints = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock
peak-fp16,A100-SXM4-40GB,fp16,peak,,,,311.2,,TFLOPS,,test,,
lat-l1,A100-80GB,,latency,,,,33,,cycles,,test,,
gemm-small,A100,fp16,gemm,512,512,512,20,15,us,,test,dense=128x128x32_64x64_s5;sparse=128x128x64_64x64_s3,locked:1410
gemm-tflops,A100,fp16,gemm,1024,1024,1024,100,150,TFLOPS,1.5,test,,boost
gemm-third,A100,fp16,gemm,256,1024,512,12,10,us,,test,,
mma-sp,A100,fp16,mma,16,8,32,,1979.1,FMA/clk/SM,,test,,
`

func TestValidatorRunsEveryKind(t *testing.T) {
	t.Parallel()
	pts, err := ParsePoints(strings.NewReader(smallPoints), "small.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{Calibrated: []string{"lat-l1"}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]Summary{}
	for _, s := range rep.Summary {
		kinds[s.Kind] = s
	}
	for _, k := range []string{"peak", "latency", "gemm_dense_time",
		"gemm_sparse_time", "gemm_speedup"} {
		if kinds[k].N == 0 {
			t.Errorf("no %s comparison (summary %+v, skipped %v)", k,
				rep.Summary, rep.Skipped)
		}
	}
	if s := kinds["peak"]; !s.Check || s.HeldOutN != 0 {
		t.Errorf("peaks must be arithmetic checks, not held-out predictions: %+v", s)
	}
	if s := kinds["gemm_speedup"]; s.RankCorrelation == nil || s.Over+s.Under != s.HeldOutN {
		t.Errorf("speedup summary: rank correlation %v, over %d + under %d vs %d held out",
			s.RankCorrelation, s.Over, s.Under, s.HeldOutN)
	}
	if s := kinds["gemm_dense_time"]; s.PinnedN != 1 {
		t.Errorf("dense time: %d pinned rows, want 1 (gemm-small)", s.PinnedN)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "mma-sp") {
		t.Errorf("skipped %v: want the mma row, with its reason", rep.Skipped)
	}
	for _, r := range rep.Rows {
		checkRow(t, r)
	}
	if _, worst := rep.MaxMAPE(); worst <= 0 {
		t.Errorf("max MAPE %g: errors were not computed", worst)
	}
}

func checkRow(t *testing.T, r Row) {
	t.Helper()
	if r.Simulated <= 0 {
		t.Errorf("%s %s: simulated %g", r.ID, r.Kind, r.Simulated)
	}
	if r.ID == "lat-l1" && (r.HeldOut || r.Config != "a100-80gb") {
		t.Errorf("lat-l1: held out %v on %s", r.HeldOut, r.Config)
	}
	if r.ID == "gemm-small" && r.Kind != "gemm_speedup" {
		want := map[string]string{"gemm_dense_time": "128x128x32_64x64_s5",
			"gemm_sparse_time": "128x128x64_64x64_s3"}[r.Kind]
		if r.PinnedKernel != want || r.PinnedError == nil || r.Clock != "locked:1410" {
			t.Errorf("gemm-small %s: pinned %q (error %v, clock %q), want %s",
				r.Kind, r.PinnedKernel, r.PinnedError, r.Clock, want)
		}
		// The row ran the kernel it names: that is its error; the model's
		// own choice is beside it.
		if r.PinnedError != nil && (r.Kernel != want || r.Error != *r.PinnedError || r.SelectedError == nil) {
			t.Errorf("gemm-small %s: kernel %q, error %v against the pinned %v, selected %v: "+
				"want the pinned kernel's, and the selection beside it", r.Kind, r.Kernel, r.Error,
				*r.PinnedError, r.SelectedError)
		}
	}
	if strings.HasSuffix(r.Kind, "_time") && strings.HasPrefix(r.ID, "gemm") {
		// A locked row runs at its clock, which is the boost clock here,
		// so it has no second value; the others run power-capped under
		// the board's 400 W and again at the locked 1410 MHz.
		locked := r.ID == "gemm-small"
		switch {
		case locked && (r.SimulatedClockMHz != 1410 || r.BoostError != nil ||
			r.Conditions != "locked 1410 MHz"):
			t.Errorf("%s %s: conditions %q at %d MHz (boost error %v), want locked 1410 alone",
				r.ID, r.Kind, r.Conditions, r.SimulatedClockMHz, r.BoostError)
		case !locked && (r.BoostError == nil || r.BoostClockMHz != 1410 ||
			!strings.Contains(r.Conditions, "boost under 400 W") ||
			r.SimulatedClockMHz <= 0 || r.SimulatedClockMHz > 1410):
			t.Errorf("%s %s: conditions %q at %d MHz, boost at %d MHz (error %v): "+
				"want power-capped under 400 W and a second value at 1410",
				r.ID, r.Kind, r.Conditions, r.SimulatedClockMHz, r.BoostClockMHz, r.BoostError)
		}
		if r.ID == "gemm-third" && !strings.HasPrefix(r.Conditions, "clock not stated") {
			t.Errorf("gemm-third %s: conditions %q, want them marked as not stated", r.Kind, r.Conditions)
		}
	}
	if r.ID == "gemm-tflops" && r.Kind == "gemm_dense_time" {
		want := 2.0 * 1024 * 1024 * 1024 / 100e12 * 1e6
		if d := r.Measured - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("TFLOPS row converted to %g us, want %g", r.Measured, want)
		}
	}
}

// Spearman's rho against values worked by hand: ranks (1,2,3,4) vs
// (1,3,2,4) give 1 - 6*2/(4*15) = 0.8; ties take their mean rank.
func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 30, 20, 40}, 0.8},
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, -1},
		{[]float64{1, 2, 2, 3}, []float64{1, 2, 2, 3}, 1},
		{[]float64{5, 1, 9}, []float64{50, 10, 90}, 1},
	} {
		if got := spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("spearman(%v, %v) = %g, want %g", c.x, c.y, got, c.want)
		}
	}
}

func TestSummaryBiasAndSigns(t *testing.T) {
	rows := []Row{{Error: 0.1, HeldOut: true}, {Error: -0.3, HeldOut: true},
		{Error: 0.2}}
	s := summarizeKind("gemm_dense_time", rows)
	if math.Abs(s.HeldOutBias-(-0.1)) > 1e-12 || math.Abs(s.HeldOutMAPE-0.2) > 1e-12 {
		t.Errorf("held-out bias %g, MAPE %g: want -0.1, 0.2", s.HeldOutBias, s.HeldOutMAPE)
	}
	if s.Over != 1 || s.Under != 1 || math.Abs(s.Bias-0) > 1e-12 {
		t.Errorf("over %d under %d bias %g: want 1, 1, 0", s.Over, s.Under, s.Bias)
	}
}

func TestBadPointsFiles(t *testing.T) {
	for name, text := range map[string]string{
		"header":  "id,hw\nx,y\n",
		"number":  strings.Replace(smallPoints, "311.2", "abc", 1),
		"missing": strings.Replace(smallPoints, "512,512,512", "512,,512", 1),
		"fields":  smallPoints + "short,row\n",
		"kernel":  strings.Replace(smallPoints, "dense=128x128x32", "fast=128x128x32", 1),
		"clock":   strings.Replace(smallPoints, "locked:1410", "locked:fast", 1),
		"policy":  strings.Replace(smallPoints, ",boost", ",turbo", 1),
	} {
		_, err := ParsePoints(strings.NewReader(text), "bad.csv")
		if err == nil || !strings.Contains(err.Error(), "bad.csv") {
			t.Errorf("%s: want an error naming the file, got %v", name, err)
		}
	}
}

// The shared collection's format (no kernel and clock columns) still loads.
func TestTwelveColumnFile(t *testing.T) {
	text := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source\n" +
		"g,A100,fp16,gemm,64,64,64,1,,us,,x\n"
	pts, err := ParsePoints(strings.NewReader(text), "old.csv")
	if err != nil || len(pts) != 1 || pts[0].Kernels != nil || pts[0].Clock != "" {
		t.Fatalf("12-column file: %v %+v", err, pts)
	}
}

// Each row runs on its hardware's built-in config: the PCIe card on its
// own (its 250 W limit is what power_capped reads), each of which loads.
func TestConfigForHardware(t *testing.T) {
	for hw, want := range map[string]string{"A100-PCIE-40GB": "a100-pcie-40gb",
		"A100-SXM4-40GB": "a100-40gb", "A100": "a100-40gb", "A100-80GB-SXM": "a100-80gb",
		"A100-SXM4-80GB": "a100-80gb", "H100-SXM": "h100-sxm", "RTX-3090": "rtx3090",
		"GeForce RTX 3090": "rtx3090", "RTX-A6000": "rtx-a6000", "A40": "a40"} {
		got, ok := ConfigFor(hw)
		if !ok || got != want {
			t.Errorf("%s: config %q, want %q", hw, got, want)
			continue
		}
		if _, err := configs.Load([]string{got}, nil); err != nil {
			t.Errorf("%s: %v", hw, err)
		}
	}
}

// TestPowerCappedRowsReportTheirClock: under power_capped with a limit
// below what a GEMM draws at 1410 MHz (an idle A100 draws about 65 W),
// every time row says the lower clock its kernel ran at.
func TestPowerCappedRowsReportTheirClock(t *testing.T) {
	t.Parallel()
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock
gemm-capped,A100,fp16,gemm,1024,1024,1024,100,150,TFLOPS,1.5,test,,boost
`
	pts, err := ParsePoints(strings.NewReader(points), "capped.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{Sets: []string{"gpu.clock_policy=power_capped", "power.limit_w=120"}})
	if err != nil {
		t.Fatal(err)
	}
	times := 0
	for _, r := range rep.Rows {
		if !strings.HasSuffix(r.Kind, "_time") {
			continue
		}
		times++
		if r.SimulatedClockMHz <= 0 || r.SimulatedClockMHz >= 1410 {
			t.Errorf("%s: simulated at %d MHz under a 120 W cap", r.Kind, r.SimulatedClockMHz)
		}
	}
	if times != 2 {
		t.Errorf("%d time rows, want dense and sparse", times)
	}
}

// TestPerModeConditionsAndCalibration: a row whose sparse time was
// measured at a locked clock and whose dense clock is not stated runs
// each mode under its own conditions; ID:MODE calibrates one mode only,
// and a calibration row that is not controlled is named in a note.
func TestPerModeConditionsAndCalibration(t *testing.T) {
	t.Parallel()
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness
gemm-mixed,A100,fp16,gemm,512,1024,512,20,15,us,,test,,dense=;sparse=locked:1200,cutlass_profiler
`
	pts, err := ParsePoints(strings.NewReader(points), "mixed.csv")
	if err != nil {
		t.Fatal(err)
	}
	p := pts[0]
	if p.Controlled(tensorcore.Dense) || !p.Controlled(tensorcore.Sparse) {
		t.Errorf("controlled dense %v sparse %v: want only the locked sparse time",
			p.Controlled(tensorcore.Dense), p.Controlled(tensorcore.Sparse))
	}
	rep, err := Run(pts, Options{Calibrated: []string{"gemm-mixed:sparse", "gemm-mixed:dense"},
		Conditions: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		switch r.Kind {
		case "gemm_sparse_time":
			if r.SimulatedClockMHz != 1200 || r.HeldOut || r.BoostError != nil {
				t.Errorf("sparse: %d MHz, held out %v, boost %v: want 1200, calibration, none",
					r.SimulatedClockMHz, r.HeldOut, r.BoostError)
			}
		case "gemm_dense_time":
			if !strings.HasPrefix(r.Conditions, "clock not stated") {
				t.Errorf("dense conditions %q", r.Conditions)
			}
		}
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "dense time of gemm-mixed") {
		t.Errorf("notes %q: want one naming the uncontrolled dense calibration", rep.Notes)
	}
}

func TestConditionColumnsRefuseBadValues(t *testing.T) {
	head := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness\n"
	for _, c := range []struct{ row, want string }{
		{"g,A100,fp16,gemm,64,64,64,1,1,us,,s,,dense=boost;dense=boost,", "names dense twice"},
		{"g,A100,fp16,gemm,64,64,64,1,1,us,,s,,fast=boost,", "want a value or dense=V;sparse=V"},
		{"g,A100,fp16,gemm,64,64,64,1,1,us,,s,,sparse=locked:0,", "want locked:MHZ"},
		{"g,A100,fp16,gemm,64,64,64,1,1,us,,s,,boost,nsight", "column harness"},
		{"g,A100,fp16,gemm,64,64,64,1,1,us,,s,,boost,dense=torch;sparse=cudnn", "column harness"},
	} {
		_, err := ParsePoints(strings.NewReader(head+c.row+"\n"), "bad.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.csv:2") {
			t.Errorf("%s: error %v, want bad.csv:2 and %q", c.row, err, c.want)
		}
	}
}

// TestHarnessOperandsSetTheClock: the CUTLASS profiler's small-integer
// operands toggle fewer bits than torch.randn's, so under the same power
// limit its row draws less power and runs at a clock no lower (strictly
// higher here, where the cap binds); each row says what it multiplied.
func TestHarnessOperandsSetTheClock(t *testing.T) {
	t.Parallel()
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness
g-cutlass,A100,fp16,gemm,1024,1024,1024,100,,TFLOPS,,test,,boost,cutlass_profiler
g-torch,A100,fp16,gemm,1024,1024,1024,100,,TFLOPS,,test,,boost,torch
`
	pts, err := ParsePoints(strings.NewReader(points), "harness.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{Sets: []string{"power.limit_w=150"}, Conditions: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	mhz := map[string]int{}
	for _, r := range rep.Rows {
		mhz[r.ID] = r.SimulatedClockMHz
		want := map[string]string{"g-cutlass": "bit activity 0.167", "g-torch": "bit activity 0.429"}[r.ID]
		if !strings.Contains(r.Operands, want) {
			t.Errorf("%s: operands %q, want %q", r.ID, r.Operands, want)
		}
	}
	if !(mhz["g-cutlass"] > mhz["g-torch"]) || mhz["g-torch"] >= 1410 {
		t.Errorf("clocks %v: want the cap to bind for torch.randn and the CUTLASS integers to run faster", mhz)
	}
}

// TestFixedCostsPredictALongerK: the split of a row's time into a fixed
// part and a mainloop (from K and 2K) predicts the same kernel's time at
// 4K, simulated apart, and both parts are positive.
func TestFixedCostsPredictALongerK(t *testing.T) {
	t.Parallel()
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness
g-fixed,A100,fp16,gemm,1024,1024,1024,20,15,us,,test,dense=128x128x32_64x64_s5;sparse=128x128x64_64x64_s3,locked:1410,cutlass_profiler
`
	pts, err := ParsePoints(strings.NewReader(points), "fixed.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{FixedCosts: true, Conditions: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if !strings.HasSuffix(r.Kind, "_time") {
			continue
		}
		if !(r.FixedUS > 0 && r.MainloopUS > 0) {
			t.Errorf("%s: fixed %g us, mainloop %g us: want both positive", r.Kind, r.FixedUS, r.MainloopUS)
			continue
		}
		mode := tensorcore.Dense
		if r.Kind == "gemm_sparse_time" {
			mode = tensorcore.Sparse
		}
		tile, splitK := pinnedPlan(r.Kernel)
		ld, err := configs.Load([]string{"a100-40gb"}, []string{"kernel.force=" + tile,
			"kernel.split_k=[" + strconv.Itoa(splitK) + "]", "power.data_activity=0.1667"})
		if err != nil {
			t.Fatal(err)
		}
		g := gemmOf(pts[0])
		g.K *= 4
		out, err := sim.Run(ld, sim.Job{Workloads: []*workloads.Trace{{Name: "t", GEMMs: []workloads.GEMM{g}}},
			Modes: []tensorcore.Mode{mode}})
		if err != nil {
			t.Fatal(err)
		}
		want := r.FixedUS + 4*r.MainloopUS
		got := out.Results[0].TimeUS
		if math.Abs(got/want-1) > 0.05 {
			t.Errorf("%s %s: at 4K %.3f us, the split predicts %.3f (fixed %.3f + 4 x %.3f)",
				r.Kind, r.Kernel, got, want, r.FixedUS, r.MainloopUS)
		}
		// The phases of the one run at K (Row.Phases) are reported beside
		// it; their fixed part is the exposed launch, prologue and
		// epilogue of that run, which a short run's first k-steps (on
		// stages the prologue filled) make differ from the line through K
		// and 2K, so they are logged here, not held to the 4K time.
		if p := r.Phases; p == nil {
			t.Errorf("%s: no phases", r.Kind)
		} else {
			fromPhases := (p.Fixed()*r.Simulated + 4*p.Mainloop*r.Simulated) / (1 - p.LastWave)
			t.Logf("%s %s: at 4K %.3f us; from K and 2K %.3f (%+.1f %%), from the phases at K %.3f (%+.1f %%)",
				r.Kind, r.Kernel, got, want, 100*(want/got-1), fromPhases, 100*(fromPhases/got-1))
		}
	}
}

// Progress counts every GEMM simulation of the run against one total:
// two configs' runs (a locked and a boost clock), the fixed-cost runs at
// twice the K, the pinned kernel; done only grows and ends at the total
// (a per-run count would restart at 1/1 and say "ETA 0s" for the rest).
func TestProgressCountsTheWholeRun(t *testing.T) {
	t.Parallel()
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness
g-a,A100,fp16,gemm,256,256,256,20,15,us,,test,,locked:1200,cutlass_profiler
g-b,A100,fp16,gemm,256,512,256,20,15,us,,test,dense=128x128x32_64x64_s5,locked:1410,cutlass_profiler
`
	pts, err := ParsePoints(strings.NewReader(points), "progress.csv")
	if err != nil {
		t.Fatal(err)
	}
	var calls [][2]int
	_, err = Run(pts, Options{FixedCosts: true, Conditions: "both",
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	// g-a: 2 modes x (locked 1200 + boost 1410) + 2 at twice the K; g-b:
	// 2 modes at 1410 (its conditions are the boost clock) + 2 at twice
	// the K + 1 pinned dense kernel.
	const want = 6 + 5
	if len(calls) == 0 {
		t.Fatal("no progress reported")
	}
	for i, c := range calls {
		if c[1] != want {
			t.Errorf("call %d: total %d, want %d", i, c[1], want)
		}
		if i > 0 && c[0] < calls[i-1][0] {
			t.Errorf("call %d: done fell from %d to %d", i, calls[i-1][0], c[0])
		}
	}
	if last := calls[len(calls)-1]; last[0] != want {
		t.Errorf("last call %v: want done = total = %d", last, want)
	}
}

// A row that names its kernel runs that kernel at the locked boost clock
// too: its "at boost" is the named kernel's time there (what
// --conditions boost reports as its simulated time), not the model's own
// choice at boost.
func TestPinnedKernelAtBoost(t *testing.T) {
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness
g-pin,A100,fp16,gemm,256,512,256,20,,us,,test,dense=64x64x32_32x32_s10,locked:1200,cutlass_profiler
`
	pts, err := ParsePoints(strings.NewReader(points), "pin.csv")
	if err != nil {
		t.Fatal(err)
	}
	run := func(conds string) Row {
		rep, err := Run(pts, Options{Conditions: conds})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Rows {
			if r.Kind == "gemm_dense_time" {
				return r
			}
		}
		t.Fatalf("--conditions %s: no dense time row", conds)
		return Row{}
	}
	both, boost := run("both"), run("boost")
	if boost.Kernel != "64x64x32_32x32_s10" || boost.SelectedKernel == boost.Kernel {
		t.Fatalf("at boost: kernel %q, own choice %q: want the named kernel, the selection another",
			boost.Kernel, boost.SelectedKernel)
	}
	if both.BoostError == nil || both.BoostSimulated != boost.Simulated {
		t.Errorf("--conditions both: at boost %g us, want the named kernel's %g us at boost (own choice there %g us)",
			both.BoostSimulated, boost.Simulated, boost.SelectedSimulated)
	}
	if both.Simulated == both.BoostSimulated {
		t.Errorf("locked 1200 and boost 1410 both %g us", both.Simulated)
	}
}

// Nsight Compute's duration is the kernel's own time: a row timed with ncu
// runs without the launch gap (sm.kernel_launch_latency), so it is
// shorter than the same row with no harness by that gap (within 5 %;
// measured 0.986 of it), cold
// L2 and default operands otherwise.
func TestNcuLeavesOutTheLaunchGap(t *testing.T) {
	const points = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness
g-ncu,A100,fp16,gemm,256,512,256,20,,us,,test,,locked:1410,ncu
g-plain,A100,fp16,gemm,256,512,256,20,,us,,test,,locked:1410,
`
	pts, err := ParsePoints(strings.NewReader(points), "ncu.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{Conditions: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Row{}
	for _, r := range rep.Rows {
		got[r.ID] = r
	}
	n, p := got["g-ncu"], got["g-plain"]
	if n.Timing == "" || n.L2Start != "" || n.Operands != "" || p.Timing != "" {
		t.Errorf("ncu row: timing %q, l2 %q, operands %q; plain row timing %q", n.Timing, n.L2Start, n.Operands, p.Timing)
	}
	ld, err := configs.Load([]string{"a100-40gb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gap := float64(ld.Config.SM.KernelLaunchLatency) / 1410 // us at 1410 MHz
	if d := p.Simulated - n.Simulated; math.Abs(d-gap) > 0.05*gap {
		t.Errorf("ncu row %.4f us, plain %.4f us: %.4f us apart, want the launch gap %.4f us",
			n.Simulated, p.Simulated, d, gap)
	}
}

// A gpu-l2-stream row with a shape (m threads per CTA, n doubles, k CTAs
// per SM) runs the kernel at that shape: at the bw-l2-stream-store row's
// own shape (640 x 2, size 8063's 516033 doubles) it gives that row's
// figure, and with a buffer beyond the L2 (49.6 MiB) the DRAM's store
// rate, well under the L2's.
func TestStreamRowsRunTheirShape(t *testing.T) {
	t.Parallel()
	const rows = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source
bw-l2-stream-store,A100-80GB,,bandwidth,,,,2595,,GB/s,,test
bw-l2-stream-store-4mb,A100-80GB,,bandwidth,640,516033,2,2595,,GB/s,,test
bw-l2-stream-store-50mb,A100-80GB,,bandwidth,640,6504385,2,1894,,GB/s,,test
`
	got := simulatedByID(t, rows)
	if len(got) != 3 || got["bw-l2-stream-store-4mb"] != got["bw-l2-stream-store"] {
		t.Errorf("simulated %v: want three rows, the 4mb one equal to the unshaped row", got)
	}
	if got["bw-l2-stream-store-50mb"] > 0.8*got["bw-l2-stream-store"] {
		t.Errorf("beyond the L2: %.0f GB/s, not under 0.8 x the L2's %.0f",
			got["bw-l2-stream-store-50mb"], got["bw-l2-stream-store"])
	}
}

// A lat-l2-all row chases every line of its footprint (n KiB): beyond the
// L2 (160 MiB) it gives the DRAM's latency, lat-dram's figure within 2 %.
func TestChaseRowsRunTheirFootprint(t *testing.T) {
	t.Parallel()
	const rows = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source
lat-dram,A100-80GB,,latency,,,,552,,cycles,,test
lat-l2-all-160mb,A100-80GB,,latency,,163840,,552,,cycles,,test
`
	got := simulatedByID(t, rows)
	if d, a := got["lat-dram"], got["lat-l2-all-160mb"]; len(got) != 2 || math.Abs(a/d-1) > 0.02 {
		t.Errorf("simulated %v: want the 160 MiB chase within 2 %% of lat-dram", got)
	}
}

// simulatedByID runs a points file's rows and gives each row's simulated
// value by id.
func simulatedByID(t *testing.T, rows string) map[string]float64 {
	t.Helper()
	pts, err := ParsePoints(strings.NewReader(rows), "rows.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rep.Rows {
		got[r.ID] = r.Simulated
	}
	return got
}
