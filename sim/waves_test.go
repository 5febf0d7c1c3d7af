package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// At one CTA per SM the first waves start in lock-step and the step
// between them is not yet the steady one, so wave extrapolation tracks
// six waves and measures the step over the last three: here on 16 SMs
// (2048x1280x256 dense with 128x128x64_64x64_s3, one CTA per SM, 10
// waves, the DRAM at 16/108 of the A100's), within 1 % of the full
// simulation. The long tier holds the same on 108 SMs
// (TestOneCTAPerSMSettlesOnTheA100), where tracking three waves is
// 2.9 % off; on 16 SMs it is not, so here the six waves are held by the
// note.
func TestOneCTAPerSMTracksSettledWaves(t *testing.T) {
	t.Parallel()
	checkSettledWaves(t, [3]int{2048, 1280, 256}, "gpu.sm_count=16", "dram.bandwidth_gbps=230")
}

// checkSettledWaves runs shape dense on 128x128x64_64x64_s3 at one CTA
// per SM in 10 waves under sets, wave-extrapolated and in full: six
// waves tracked, and the cycles within 1 %.
func checkSettledWaves(t *testing.T, shape [3]int, sets ...string) {
	t.Helper()
	job := gemmJob(shape)
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	sets = append(sets, "kernel.force=128x128x64_64x64_s3_splitk1")
	full := run(t, job, append(sets, "sim.extrapolate_waves=false", "sim.fast_forward=false")...).Results[0]
	ext := run(t, job, sets...).Results[0]
	t.Logf("%v: extrapolated %d cycles, full %d (%+.2f %%)", shape, ext.Cycles, full.Cycles,
		100*(float64(ext.Cycles)/float64(full.Cycles)-1))
	if full.CTAsPerSM != 1 || full.Waves != 10 {
		t.Fatalf("kernel at %d CTAs per SM, %d waves: want 1 and 10", full.CTAsPerSM, full.Waves)
	}
	if !strings.Contains(ext.Note, "extrapolated from the first 6 and the last of 10 waves") {
		t.Errorf("note %q: want six tracked waves", ext.Note)
	}
	if d := rel(ext.Cycles, full.Cycles); d > 0.01 {
		t.Errorf("extrapolated %d cycles, full %d (%.2f %% apart)", ext.Cycles, full.Cycles, 100*d)
	}
}

// At two CTAs per SM the first waves already blur, and three are tracked
// (16 SMs: 8 waves whose 8 MB of output the L2 holds; gpu.trackedWavesFor).
func TestTwoCTAsPerSMTrackThreeWaves(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{2048, 2048, 128})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	r := run(t, job, "kernel.force=128x128x32_64x64_s5_splitk1", "gpu.sm_count=16").Results[0]
	if r.CTAsPerSM < 2 || !strings.Contains(r.Note, "extrapolated from") {
		t.Fatalf("kernel at %d CTAs per SM, %d waves (%q): want 2 or more, wave-extrapolated",
			r.CTAsPerSM, r.Waves, r.Note)
	}
	if !strings.Contains(r.Note, "extrapolated from the first 3 and the last of") {
		t.Errorf("note %q: want three tracked waves", r.Note)
	}
}

// A kernel that writes more output than the L2 holds is tracked until its
// output has filled the L2 (gpu.trackedWavesFor), so that the steady
// window sees the write-back every later wave pays: its extrapolation is
// within 2 % of the full simulation (with the three tracked waves of a
// two-CTA kernel it came out 5.0 % fast). 16 SMs, a 2.5 MB L2 and DRAM at
// 16/108 of the A100's bandwidth stand for the 40 MB, 1555 GB/s A100 at a
// fraction of the work.
func TestExtrapolationWaitsForTheOutputToFillTheL2(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{64, 262144, 144})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	sets := []string{"gpu.sm_count=16", "l2.size_kb=2560", "dram.bandwidth_gbps=230",
		"kernel.force=64x256x32_64x64_s4"}
	full := run(t, job, append(sets, "sim.extrapolate_waves=false")...).Results[0]
	ext := run(t, job, sets...).Results[0]
	if !strings.Contains(ext.Note, "extrapolated from the first 6 and the last of 32 waves") {
		t.Errorf("note %q: want six tracked waves of 32", ext.Note)
	}
	if d := float64(ext.Cycles)/float64(full.Cycles) - 1; d > 0.02 || d < -0.02 {
		t.Errorf("extrapolated %d cycles, full %d (%+.2f %%)", ext.Cycles, full.Cycles, 100*d)
	}
}

// longCTAFewWaves are kernels of long CTAs (128 k-steps or more) at two
// CTAs per SM with 5 to 7 waves on 8 SMs (DRAM at 8/108 of the A100's),
// which wave extrapolation covers from trackedWaves + 2 waves
// (gpu.minWavesFor), not from 8: full and extrapolated 2026-12-07
// (`stcsim run --gemm SHAPE --mode MODE --set gpu.sm_count=8 --set
// dram.bandwidth_gbps=115 --set kernel.force=KERNEL` with and without
// `--set sim.extrapolate_waves=false --set sim.fast_forward=false`):
// 1024x1280x4096 dense, 5 waves, -0.15 % in cycles; the long tier holds
// more (longCTAFewWavesMore, TestLongCTAsFewWavesOnTheA100).
var longCTAFewWaves = []fewWaves{
	{[3]int{1024, 1280, 4096}, tensorcore.Dense, "128x128x32_64x64_s5_splitk1", 5},
}

// fewWaves is a kernel of long CTAs at two CTAs per SM and its waves.
type fewWaves struct {
	shape  [3]int
	mode   tensorcore.Mode
	kernel string
	waves  int
}

// Kernels of long CTAs at two CTAs per SM are wave-extrapolated from five
// waves (three tracked, one left out, the last): their first wave ends
// before the next waves' CTAs are far along, so the three tracked waves
// are steady. Within 1 % of the full simulation in cycles and 2 % in
// tensor-core utilization (as TestExtrapolationCloseToFull's 2 % and 5 %,
// tighter: measured at most 0.15 %), and the note names the three waves.
func TestLongCTAsExtrapolateFromFiveWaves(t *testing.T) {
	t.Parallel()
	checkLongCTAFewWaves(t, longCTAFewWaves, "gpu.sm_count=8", "dram.bandwidth_gbps=115")
}

// checkLongCTAFewWaves runs each kernel under sets extrapolated and in
// full and holds them to TestLongCTAsExtrapolateFromFiveWaves' bounds.
func checkLongCTAFewWaves(t *testing.T, family []fewWaves, sets ...string) {
	t.Helper()
	for _, f := range family {
		job := gemmJob(f.shape)
		job.Modes = []tensorcore.Mode{f.mode}
		sets := append(slices.Clone(sets), "kernel.force="+f.kernel)
		full := run(t, job, append(sets, "sim.extrapolate_waves=false", "sim.fast_forward=false")...).Results[0]
		ext := run(t, job, sets...).Results[0]
		t.Logf("%v %s %s: extrapolated %d cycles, full %d (%+.2f %%)", f.shape, f.mode, f.kernel,
			ext.Cycles, full.Cycles, 100*(float64(ext.Cycles)/float64(full.Cycles)-1))
		if full.CTAsPerSM != 2 || full.Waves != f.waves {
			t.Fatalf("%v: %d CTAs per SM, %d waves; want 2 and %d", f.shape, full.CTAsPerSM, full.Waves, f.waves)
		}
		want := fmt.Sprintf("extrapolated from the first 3 and the last of %d waves", f.waves)
		if !strings.Contains(ext.Note, want) {
			t.Errorf("%v: note %q, want %q", f.shape, ext.Note, want)
		}
		if d := rel(ext.Cycles, full.Cycles); d > 0.01 {
			t.Errorf("%v: extrapolated %d cycles, full %d (%.2f %% apart)", f.shape, ext.Cycles, full.Cycles, 100*d)
		}
		if d := math.Abs(ext.TCUtilization/full.TCUtilization - 1); d > 0.02 {
			t.Errorf("%v: tensor-core utilization %.4f extrapolated, %.4f full", f.shape,
				ext.TCUtilization, full.TCUtilization)
		}
	}
}
