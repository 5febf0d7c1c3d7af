package sim

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func gemmJob(shapes ...[3]int) Job {
	t := &workloads.Trace{Name: "gemm"}
	for _, s := range shapes {
		t.GEMMs = append(t.GEMMs, workloads.GEMM{Name: "g", M: s[0],
			N: s[1], K: s[2], Precision: tensorcore.FP16, Sparsity: "2:4",
			Count: 1, Batch: 1})
		t.GEMMs[len(t.GEMMs)-1].Name = fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2])
	}
	return Job{Workloads: []*workloads.Trace{t}, Modes: tensorcore.Modes}
}

func run(t *testing.T, job Job, sets ...string) *Report {
	t.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ld, job)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// sharedRuns are the runs that several tests make alike, made once per
// test binary by whichever test asks first: runShared.
var sharedRuns struct {
	sync.Mutex
	m map[string]*sharedRun
}

type sharedRun struct {
	once sync.Once
	rep  *Report
	err  error
}

// runShared is run for a job and sets that other tests run too: one
// simulation for all of them. The report is shared: read it, never
// change it.
func runShared(t *testing.T, job Job, sets ...string) *Report {
	t.Helper()
	key := fmt.Sprintf("%v %q", job.Modes, sets)
	for _, w := range job.Workloads {
		key += fmt.Sprintf(" %s %+v", w.Name, w.GEMMs)
	}
	sharedRuns.Lock()
	if sharedRuns.m == nil {
		sharedRuns.m = map[string]*sharedRun{}
	}
	r := sharedRuns.m[key]
	if r == nil {
		r = &sharedRun{}
		sharedRuns.m[key] = r
	}
	sharedRuns.Unlock()
	r.once.Do(func() {
		ld, err := configs.Load(nil, sets)
		if err != nil {
			r.err = err
			return
		}
		r.rep, r.err = Run(ld, job)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.rep
}

// Two simulations of one job give equal reports (the first is shared
// with TestLockedAndUnreachedCapKeepCycles; the second is this test's own).
func TestRunIsDeterministic(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 1024, 512})
	a := runShared(t, job)
	b := run(t, job)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a.Results, b.Results)
	}
}

// The sparse kernel must be faster on a compute-heavy GEMM but not by the
// full 2x (B still moves at full size through shared memory), and a small
// GEMM gains less than a large one: fill, epilogue and the few waves weigh
// more when the sparse kernel halves the main loop. The band is that of
// the measured A100 speedups of mid-size and large GEMMs in
// validation/points (1.11 for 4096^3 to 1.62 for 768x49152x3072), widened
// to [1.1, 1.9].
//
// Each GEMM runs the pre-model's favourite only
// (kernel.simulated_candidates=1): the shape of the speedup, not the
// selection, is under test, and sampling three candidates tripled the
// test's time.
func TestSparseSpeedupShape(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	// 16 SMs: the large GEMM runs 4 waves of its sparse tiles, as
	// 4096x2048x2048 ran 2.4 on 108 SMs, at an eighth of the work.
	rep := run(t, gemmJob([3]int{256, 512, 512}, [3]int{2048, 1024, 2048}),
		"kernel.simulated_candidates=1", "gpu.sm_count=16")
	t.Logf("speedups: small %.3f (%s), large %.3f (%s)", rep.Results[1].Speedup,
		rep.Results[1].Kernel, rep.Results[3].Speedup, rep.Results[3].Kernel)
	small, large := rep.Results[1].Speedup, rep.Results[3].Speedup
	if large < 1.1 || large > 1.9 {
		t.Errorf("large sparse speedup %.3f outside [1.1, 1.9]", large)
	}
	if small >= large {
		t.Errorf("small GEMM speedup %.3f >= large %.3f", small, large)
	}
}

func TestBatchedGEMMCountsAllBatches(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{128, 128, 64})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	one := run(t, job).Results[0]
	job.Workloads[0].GEMMs[0].Batch = 64
	many := run(t, job).Results[0]
	if many.Cycles <= one.Cycles || many.DRAMReadBytes < 32*one.DRAMReadBytes {
		t.Fatalf("batch 64: %d cycles, %d B; batch 1: %d cycles, %d B",
			many.Cycles, many.DRAMReadBytes, one.Cycles, one.DRAMReadBytes)
	}
}

func TestNoKernelFitsIsAnError(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"shared_memory.carveout_kb=8"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(ld, gemmJob([3]int{1024, 1024, 1024}))
	if err == nil || !strings.Contains(err.Error(), "no kernel") ||
		!strings.Contains(err.Error(), "shared memory") {
		t.Fatalf("want a no-kernel error naming shared memory, got %v", err)
	}
}

// The forced tile is used in both modes, its split-K still chosen (on 16
// SMs: the choice, not the GPU's size, is under test).
func TestForcedKernelIsUsed(t *testing.T) {
	t.Parallel()
	const tile = "128x128x64_64x64_s4"
	rep := run(t, gemmJob([3]int{1024, 1024, 1024}), "kernel.force="+tile, "gpu.sm_count=16")
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.Kernel, tile) {
			t.Errorf("%s used %s, want %s", r.Mode, r.Kernel, tile)
		}
		if want := map[bool]string{false: "data_parallel", true: "split_k_parallel"}[r.SplitK > 1]; r.Schedule != want {
			t.Errorf("%s ran %s (split-K %d) under schedule %q, want %q", r.Mode,
				r.Kernel, r.SplitK, r.Schedule, want)
		}
	}
}

func TestSplitKForSkinnyDeepGEMM(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{256, 256, 16384})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	r := run(t, job).Results[0]
	if r.SplitK < 2 {
		t.Fatalf("kernel %s: want split-K for a 4-tile, deep GEMM", r.Kernel)
	}
	if r.Schedule != "split_k_parallel" {
		t.Errorf("kernel %s: schedule %q, want split_k_parallel", r.Kernel, r.Schedule)
	}
	if r.DRAMWriteBytes+r.DRAMWritebackBytes < 256*256*2 {
		t.Fatalf("D not written: %d B", r.DRAMWriteBytes+r.DRAMWritebackBytes)
	}
}

// extrapolationFamily is the GEMM family on which wave extrapolation
// (sim.extrapolate_waves, the default) is held to the full simulation:
// dense and sparse, small (32x32) and large (64x64) warp tiles, one to
// several CTAs per SM, 8 waves or more.
var extrapolationFamily = []struct {
	shape  [3]int
	kernel string
	// l2Resident: A and B fit in L2, so DRAM reads are compulsory misses
	// that come in the first waves and are not steady (docs/sm.md): the
	// traffic is not compared.
	l2Resident bool
	// denseMiss: the dense kernel's cycles and tensor-core utilization
	// are a known miss, logged and not asserted (below).
	denseMiss bool
}{
	{[3]int{32768, 1024, 1024}, "128x128x64_64x64_s3_splitk1", false, false},
	{[3]int{16384, 2048, 512}, "256x128x64_64x64_s3_splitk1", false, false},
	// 32x32 warp tiles, 16 k-steps per CTA: sparse 10 waves of two CTAs
	// per SM (+0.67 % in cycles when measured), dense 19 waves of one
	// CTA per SM, whose first waves start in lock-step: tracked over
	// waves 1-3 it missed by +3.25 % in cycles, over waves 4-6 (six
	// tracked, as now at one CTA per SM) +0.52 % (2026-12-01, docs/sm.md).
	{[3]int{4096, 2048, 1024}, "64x64x64_32x32_s6_splitk1", true, false},
}

// agreement is one quantity of a full and an extrapolated run and the
// relative difference allowed between them.
type agreement struct {
	name  string
	f, e  float64
	bound float64
}

// compareExtrapolated checks each pair of full and extrapolated results:
// the extrapolated one's note says so (note) and the full one's does
// not, and every agreement of what(full, extrapolated) is within its
// bound, except the ones skip names known misses (logged, not compared).
func compareExtrapolated(t *testing.T, full, ext *Report, note string, skip func(tensorcore.Mode, string) bool,
	what func(r, e LayerResult) []agreement) {
	t.Helper()
	for i, r := range full.Results {
		e := ext.Results[i]
		if !strings.Contains(e.Note, note) || strings.Contains(r.Note, note) {
			t.Errorf("%s %s: notes %q (full) and %q (extrapolated)", r.Layer, r.Mode, r.Note, e.Note)
		}
		for _, c := range what(r, e) {
			if skip(r.Mode, c.name) {
				t.Logf("%s %s %s (known miss: not compared): full %g, extrapolated %g",
					r.Layer, r.Mode, c.name, c.f, c.e)
				continue
			}
			if d := (c.e - c.f) / c.f; math.Abs(d) > c.bound {
				t.Errorf("%s %s %s: full %g, extrapolated %g (%+.1f %%)", r.Layer, r.Mode,
					c.name, c.f, c.e, 100*d)
			}
		}
	}
}

// The fast (tile-granular) memory model must agree with the detailed one
// (every sector through Akita caches and DRAM channels) on small GEMMs run
// through the whole SM model.
func TestFastMemoryAgreesWithDetailed(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	if testing.Short() {
		t.Skip("detailed memory is slow")
	}
	// 8 SMs (four of the 64x2048 GEMM's CTAs each, one of 128x256's):
	// the same GEMMs through both granularities, fewer SM ports to build.
	job := gemmJob([3]int{64, 2048, 64}, [3]int{128, 256, 512})
	force := "kernel.force=64x64x64_32x32_s6"
	fast := run(t, job, force, "gpu.sm_count=8")
	det := run(t, job, force, "gpu.sm_count=8", "sim.memory_granularity=detailed")
	for i, f := range fast.Results {
		d := det.Results[i]
		fb := f.DRAMReadBytes + f.DRAMWriteBytes + f.DRAMWritebackBytes
		db := d.DRAMReadBytes + d.DRAMWriteBytes + d.DRAMWritebackBytes
		t.Logf("%s %s: cycles fast %d, detailed %d; DRAM bytes fast %d, detailed %d", f.Layer,
			f.Mode, f.Cycles, d.Cycles, fb, db)
		if rel(fb, db) > 0.02 {
			t.Errorf("%s %s: DRAM bytes fast %d, detailed %d", f.Layer, f.Mode, fb, db)
		}
		if rel(f.Cycles, d.Cycles) > 0.05 {
			t.Errorf("%s %s: cycles fast %d, detailed %d", f.Layer, f.Mode,
				f.Cycles, d.Cycles)
		}
	}
}

func rel(a, b uint64) float64 {
	return math.Abs(float64(a)-float64(b)) / float64(b)
}

// A record's DRAM bytes are those its time covers, so its bandwidth can
// never exceed the DRAM's: a batched attention-like GEMM whose output
// stays in L2 until the write-back after the kernel used to count that
// write-back and land above the DRAM roof.
func TestRecordTrafficFitsInItsTime(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := ld.Config.Memory.DRAM
	roof := d.BandwidthGBps * d.Efficiency
	job := gemmJob([3]int{128, 128, 64}, [3]int{1024, 1024, 1024})
	job.Workloads[0].GEMMs[0].Batch = 256
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	for _, r := range run(t, job).Results {
		gbps := float64(r.DRAMReadBytes+r.DRAMWriteBytes) / (r.TimeUS * 1e3)
		if gbps > roof || math.Abs(gbps-r.DRAMGBps) > 1e-6*gbps {
			t.Errorf("%s: %.0f GB/s during the kernel (record says %.0f), "+
				"above the %.0f GB/s DRAM roof", r.Layer, gbps, r.DRAMGBps, roof)
		}
		if r.DRAMWritebackBytes == 0 {
			t.Errorf("%s: no write-back of D after the kernel", r.Layer)
		}
	}
}

// The loss decomposition says why a sparse layer falls short of the
// ideal speedup: its shares sum to 1, ideal time plus the loss is the
// sparse time, and starving the GPU of DRAM bandwidth moves the loss
// towards DRAM.
func TestLossDecompositionFollowsTheBottleneck(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{1024, 2048, 1024})
	dramShare := func(sets ...string) float64 {
		rep := run(t, job, append(sets, "kernel.force=128x128x64_64x64_s3")...)
		d, s := rep.Results[0], rep.Results[1]
		if s.LossUS == 0 || s.IdealSpeedup != 2 {
			t.Fatalf("%v: sparse record lacks the loss (ideal %g)", sets, s.IdealSpeedup)
		}
		if s.CTAs == 0 || s.Waves == 0 || s.CTAsPerSM == 0 || s.OccupancyLimit == "" {
			t.Errorf("launch not recorded: %+v", s.Explain)
		}
		l := s.Loss
		sum := sumShares(l)
		if math.Abs(sum-1) > 1e-9 || math.Abs(d.TimeUS/2+s.LossUS-s.TimeUS) > 1e-9 {
			t.Errorf("%v: shares sum to %g; ideal %g + loss %g != sparse %g",
				sets, sum, d.TimeUS/2, s.LossUS, s.TimeUS)
		}
		return l.DRAMBandwidth + l.DRAMLatency
	}
	base, starved := dramShare(), dramShare("dram.bandwidth_gbps=400")
	t.Logf("DRAM share of the loss: %.2f at 1555 GB/s, %.2f at 400 GB/s", base, starved)
	if starved <= base {
		t.Errorf("DRAM share of the loss %.2f at 400 GB/s, not above %.2f at 1555 GB/s", starved, base)
	}
}

// A kernel name printed in results pins that kernel when fed back:
// through kernel.force (the same name for both modes would not fit both,
// so each mode's own key), and dense and sparse separately.
func TestKernelNamesRoundTrip(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{128, 784, 1152})
	first := run(t, job)
	d, s := first.Results[0], first.Results[1]
	if s.SplitK < 2 && d.SplitK < 2 {
		t.Fatalf("no split-K kernel chosen (%s, %s): the test lost its point", d.Kernel, s.Kernel)
	}
	again := run(t, job, "kernel.force_dense="+d.Kernel, "kernel.force_sparse="+s.Kernel)
	for i, r := range again.Results {
		if want := first.Results[i]; r.Kernel != want.Kernel || r.Cycles != want.Cycles {
			t.Errorf("%s pinned to %s ran %s in %d cycles, not %d", r.Mode,
				want.Kernel, r.Kernel, r.Cycles, want.Cycles)
		}
	}
	one := gemmJob([3]int{128, 784, 1152})
	one.Modes = []tensorcore.Mode{tensorcore.Sparse}
	forced := run(t, one, "kernel.force="+s.Kernel).Results[0]
	if forced.Kernel != s.Kernel {
		t.Errorf("kernel.force=%s ran %s", s.Kernel, forced.Kernel)
	}
}

// kExtrapolationFamily is the GEMM family on which K extrapolation
// (sim.extrapolate_ksteps, the default) is held to the full simulation:
// dense and sparse, one and several waves, small and large warp tiles,
// a K that is not a whole number of tiles (dense), and split-K.
var kExtrapolationFamily = []struct {
	shape  [3]int
	kernel string
	modes  []tensorcore.Mode
}{
	{[3]int{2048, 2048, 8192}, "128x128x32_64x64_s5_splitk1", []tensorcore.Mode{tensorcore.Dense}},
	{[3]int{512, 1024, 16400}, "128x128x64_64x64_s3_splitk1", tensorcore.Modes},
	{[3]int{1024, 1024, 16384}, "64x64x64_32x32_s6_splitk1", []tensorcore.Mode{tensorcore.Sparse}},
	{[3]int{256, 512, 65536}, "64x64x64_32x32_s6_splitk2", []tensorcore.Mode{tensorcore.Dense}},
}

// TestExtrapolatedBusyIsConserved: every MMA of a kernel holds its tensor
// core for the same issue interval, so however a run is extrapolated, its
// tensor-core busy time is the GEMM's MMA count times that interval (8
// cycles for FP16 m16n8k16 and sparse m16n8k32, the published
// HMMA.16816 rate; K of the sparse MMA is 32). Counting the left-out
// CTAs' work per CTA finished between two waves instead came out 2-3 %
// high here (and 5-13 % off on 108 SMs). The extrapolated shared-memory
// bytes must agree with the full run's too, within 1 % (their bank
// conflicts and fill packets depend on when fills arrive: +0.77 % on the
// sparse kernel at the calibrated l2.efficiency 0.93, within 0.5 % at
// 1.0).
func TestExtrapolatedBusyIsConserved(t *testing.T) {
	t.Parallel()
	const m, n, k, sms = 2048, 1024, 1024, 4
	job := gemmJob([3]int{m, n, k})
	sets := []string{"gpu.sm_count=4", "kernel.force=128x128x64_64x64_s3_splitk1"}
	ext := run(t, job, sets...)
	full := run(t, job, append(sets, "sim.extrapolate_waves=false", "sim.fast_forward=false")...)
	for i, r := range ext.Results {
		if !strings.Contains(r.Note, "extrapolated") {
			t.Fatalf("%s: not extrapolated (%q)", r.Mode, r.Note)
		}
		instK := 16
		if r.Mode == tensorcore.Sparse {
			instK = 32
		}
		mmas := float64(m) * n * k / float64(16*8*instK)
		want := mmas * 8 / float64(sms*4) / float64(r.Cycles)
		if d := r.TCUtilization/want - 1; math.Abs(d) > 0.003 {
			t.Errorf("%s: tensor cores %.4f busy, the MMAs' %.4f (%+.2f %%)", r.Mode,
				r.TCUtilization, want, 100*d)
		}
		if f := full.Results[i]; rel(r.SmemBytes, f.SmemBytes) > 0.01 {
			t.Errorf("%s: shared-memory bytes %d extrapolated, %d in full", r.Mode,
				r.SmemBytes, f.SmemBytes)
		}
	}
}

// gemvFMAs is the FP32-pipe instructions of an M x N x K fp16 GEMV
// (TensorRT-LLM's cudaCoreGemm: CTAs of 2 rows and 4 warps, k-steps of
// 128 x 8 elements) from the kernel's structure: per warp and k-step a
// HADD2.F32 per element of the 2 rows' and the N tokens' 8-element
// vectors and 2 x N x 8 FFMAs; per warp a 5-level warp reduction of its
// 2N sums (an FADD each), and warp 0's cross-warp sums (3 FADD) and
// alpha (1 FMUL).
func gemvFMAs(m, n, k int) float64 {
	const vec, warps = 8, 4
	perWarp := k/(128*vec)*((2+n)*vec+2*n*vec) + 5*2*n
	return float64(m/2) * float64(warps*perWarp+3+1)
}

// A wave-extrapolated GEMV counts its work as its FP32-pipe instructions
// (4 SMs, 9 CTAs each: 1024 x 1 x 4096 is 15 waves, 3 tracked and the
// last simulated): its fp32 energy is the kernel's instructions' lanes
// (within 1e-9), its cycles within 2 % of the full run's, and the FP32
// pipe's share of its time (the GEMV's account) within 5 % of the full
// run's, whose busy time is the kernel's instructions at 32 /
// sm.fp32_lanes = 2 cycles each.
func TestExtrapolatedGEMVWorkIsConserved(t *testing.T) {
	t.Parallel()
	const m, n, k, units, pj = 1024, 1, 4096, 4 * 4, 0.83
	job := gemmJob([3]int{m, n, k})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	sets := []string{"gpu.sm_count=4", "kernel.force=" + configs.GEMVName,
		"power.energy.fp32_pj_per_op=0.83"}
	ext := run(t, job, sets...).Results[0]
	full := run(t, job, append(sets, "sim.extrapolate_waves=false")...).Results[0]
	if !strings.Contains(ext.Note, "extrapolated") {
		t.Fatalf("not extrapolated (%q)", ext.Note)
	}
	fmas := gemvFMAs(m, n, k)
	if busy := full.Breakdown.Compute * float64(full.Cycles) * units; math.Abs(busy/(2*fmas)-1) > 1e-3 {
		t.Errorf("full run: FP32 pipe busy %.0f cycles, the kernel's %.0f FMAs at 2 cycles", busy, fmas)
	}
	if want := pj * 32 * fmas * 1e-6; math.Abs(ext.Energy.FP32/want-1) > 1e-9 {
		t.Errorf("fp32 energy %g uJ, the kernel's FMAs' %g", ext.Energy.FP32, want)
	}
	if d := float64(ext.Cycles)/float64(full.Cycles) - 1; math.Abs(d) > 0.02 {
		t.Errorf("extrapolated %d cycles, full %d (%+.2f %%)", ext.Cycles, full.Cycles, 100*d)
	}
	if d := ext.Breakdown.Compute/full.Breakdown.Compute - 1; math.Abs(d) > 0.05 {
		t.Errorf("FP32 pipe share %.4f extrapolated, %.4f in full (%+.2f %%)",
			ext.Breakdown.Compute, full.Breakdown.Compute, 100*d)
	}
}

// sumShares adds every cause of a breakdown (every float field).
func sumShares(b Breakdown) float64 {
	v := reflect.ValueOf(b)
	sum := 0.0
	for i := 0; i < v.NumField(); i++ {
		sum += v.Field(i).Float()
	}
	return sum
}
