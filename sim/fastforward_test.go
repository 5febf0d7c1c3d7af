package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// fastForwardFamily is the family the steady-state fast-forward
// (sim.fast_forward) is held to the full simulation on: dense and sparse,
// under one wave to about five, 32 to 128 k-steps per CTA, 64x64 to
// 256x128 tiles with 32x32 and 64x64 warp tiles, one and two CTAs per
// SM, split-K; the BERT-Large and ResNet-50 shapes of the reference
// suite among them. docs/log/2026-12-02-fast-forward-per-kernel.md lists the error measured on each
// (`go test -tags long -run TestFastForwardCloseToFull -v ./sim`).
var fastForwardFamily = []struct {
	shape  [3]int
	mode   tensorcore.Mode
	kernel string
	prec   tensorcore.Precision
	sets   []string
}{
	{shape: [3]int{1024, 4096, 4096}, mode: tensorcore.Dense, kernel: "128x128x32_64x64_s5"},
	{shape: [3]int{1024, 4096, 4096}, mode: tensorcore.Sparse, kernel: "128x128x64_64x64_s3"},
	{shape: [3]int{4096, 4096, 1024}, mode: tensorcore.Dense, kernel: "128x256x32_64x64_s3"},
	{shape: [3]int{3072, 4096, 1024}, mode: tensorcore.Dense, kernel: "256x128x32_64x64_s3"},
	{shape: [3]int{2048, 2048, 4096}, mode: tensorcore.Dense, kernel: "64x64x32_32x32_s10"},
	{shape: [3]int{2048, 2048, 4096}, mode: tensorcore.Sparse, kernel: "64x64x64_32x32_s6"},
	{shape: [3]int{2048, 2048, 2048}, mode: tensorcore.Sparse, kernel: "128x128x64_64x64_s3"},
	{shape: [3]int{512, 1024, 8192}, mode: tensorcore.Sparse, kernel: "128x128x64_64x64_s3"},
	{shape: [3]int{128, 25088, 1152}, mode: tensorcore.Dense, kernel: "64x256x32_64x64_s4"},
	{shape: [3]int{256, 6272, 2304}, mode: tensorcore.Sparse, kernel: "128x128x64_64x64_s3"},
	{shape: [3]int{512, 512, 16384}, mode: tensorcore.Dense, kernel: "128x128x32_64x64_s5_splitk4"},
	{shape: [3]int{2048, 2048, 4096}, mode: tensorcore.Sparse, kernel: "128x128x32_64x64_s3", prec: tensorcore.TF32},
	{shape: [3]int{2048, 2048, 8192}, mode: tensorcore.Sparse, kernel: "128x128x128_64x64_s3", prec: tensorcore.INT8},
	{shape: [3]int{1024, 4096, 4096}, mode: tensorcore.Dense, kernel: "128x128x32_64x64_s5",
		sets: []string{"sm.scheduler_policy=lrr"}},
}

// On a kernel whose k-steps repeat exactly (one CTA per SM, held at its
// tensor cores' rate: 512x512x16384 dense on 128x128x32 tiles, split-K
// 4, 64 CTAs of 128 k-steps on 108 SMs), the time left out is whole periods
// of a periodic run, so the fast-forward gives the full run's cycles to
// the cycle, and its record says how much it left out. The L2 slices and
// the DRAM channels run at their peak here (l2.efficiency,
// dram.efficiency and dram.write_efficiency 1), stores take a whole L2
// slot (l2.write_ratio 1): at the calibrated efficiencies and write
// ratio a line takes a fraction of a cycle more, the k-steps repeat only
// to within a few cycles, and the fast-forward may land off by that much
// (82 943 against 82 939 at write ratio 0.44; 83 087 for both with every
// key calibrated). The kernel starts after the calibrated launch gap
// (2890 cycles, off the shared servers' 16-cycle booking grid: the grid
// counts from the kernel's launch).
func TestFastForwardExactWhenPeriodic(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 512, 16384})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	sets := []string{"kernel.force=128x128x32_64x64_s5_splitk4", "l2.efficiency=1",
		"l2.write_ratio=1", "dram.efficiency=1", "dram.write_efficiency=1"}
	full := run(t, job, append(sets, "sim.fast_forward=false")...).Results[0]
	ff := run(t, job, sets...).Results[0]
	if !strings.Contains(ff.Note, "fast-forwarded") || strings.Contains(full.Note, "fast-forwarded") {
		t.Fatalf("notes %q (full) and %q (fast-forwarded)", full.Note, ff.Note)
	}
	if ff.Cycles != full.Cycles {
		t.Errorf("fast-forwarded %d cycles, full %d", ff.Cycles, full.Cycles)
	}
	t.Logf("%d cycles; %s", ff.Cycles, ff.Note)
}

// Whatever the fast-forward leaves out, the work is the GEMM's: tensor-
// core busy time is the MMA count times the issue interval (8 cycles),
// the L2 bytes of every class are the full run's exactly, and the
// bank-array bytes agree within 0.5 % (16 SMs, 1024x512x4096 sparse
// and dense on 128x128 tiles: 32 CTAs, two per SM, 64 and 128 k-steps).
func TestFastForwardKeepsTheWork(t *testing.T) {
	t.Parallel()
	const m, n, k, sms = 1024, 512, 4096, 16
	for _, c := range []struct {
		mode   tensorcore.Mode
		kernel string
		instK  int
	}{{tensorcore.Sparse, "128x128x64_64x64_s3", 32}, {tensorcore.Dense, "128x128x32_64x64_s5", 16}} {
		job := gemmJob([3]int{m, n, k})
		job.Modes = []tensorcore.Mode{c.mode}
		sets := []string{"gpu.sm_count=16", "kernel.force=" + c.kernel}
		ff := run(t, job, sets...).Results[0]
		full := run(t, job, append(sets, "sim.fast_forward=false")...).Results[0]
		if !strings.Contains(ff.Note, "fast-forwarded") {
			t.Fatalf("%s: not fast-forwarded (%q)", c.mode, ff.Note)
		}
		mmas := float64(m) * n * k / float64(16*8*c.instK)
		want := mmas * 8 / float64(sms*4) / float64(ff.Cycles)
		if d := ff.TCUtilization/want - 1; math.Abs(d) > 0.001 {
			t.Errorf("%s: tensor cores %.4f busy, the MMAs' %.4f (%+.2f %%)", c.mode,
				ff.TCUtilization, want, 100*d)
		}
		if ff.L2Bytes != full.L2Bytes || ff.MetadataBytes != full.MetadataBytes {
			t.Errorf("%s: L2 bytes %d, metadata %d fast-forwarded; %d, %d in full", c.mode,
				ff.L2Bytes, ff.MetadataBytes, full.L2Bytes, full.MetadataBytes)
		}
		if rel(ff.SmemBytes, full.SmemBytes) > 0.005 {
			t.Errorf("%s: shared-memory bytes %d fast-forwarded, %d in full", c.mode,
				ff.SmemBytes, full.SmemBytes)
		}
		t.Logf("%s: %d cycles in full, %d fast-forwarded (%+.2f %%); %s", c.mode, full.Cycles,
			ff.Cycles, 100*(float64(ff.Cycles)/float64(full.Cycles)-1), ff.Note)
	}
}
