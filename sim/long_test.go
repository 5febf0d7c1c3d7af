//go:build long

// The long tier: tests that hold a fast path (wave and K extrapolation,
// the steady-state fast-forward) to the full simulation of large
// kernels, the 8192^3 peak check, and the larger cases of default-tier
// tests (one CTA per SM on 108 SMs, the decode's FFN down projection)
// (the selection's samples are held in sim/selection/long_test.go). They take minutes of CPU each, so the
// README's `go test ./...` leaves them out; `go test -tags long
// ./sim/...` runs them, as .ci/run does after the default tier.

package sim

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// The fast-forward agrees with the full simulation within 2 % in cycles
// and 3 % in tensor-core utilization and shared-memory bytes on the
// family above; the L2 traffic of every class is the full run's exactly
// (the left-out k-steps' tiles are touched, not extrapolated), and DRAM
// reads within 5 % (the L2's victims differ with the order of requests).
func TestFastForwardCloseToFull(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	for _, f := range fastForwardFamily {
		job := gemmJob(f.shape)
		job.Modes = []tensorcore.Mode{f.mode}
		if f.prec != tensorcore.FP16 {
			job.Workloads[0].GEMMs[0].Precision = f.prec
			job.Workloads[0].GEMMs[0].Sparsity = workloads.SparsityFor(f.prec)
		}
		// Wave extrapolation off in both runs: it would take the kernels
		// of 5 waves or more of long tensor-bound CTAs (2048x2048x4096
		// dense) before the fast-forward does, and this test is the
		// fast-forward's.
		sets := append([]string{"kernel.force=" + f.kernel, "sim.extrapolate_waves=false"}, f.sets...)
		full := run(t, job, append(sets, "sim.fast_forward=false")...)
		ff := run(t, job, sets...)
		compareExtrapolated(t, full, ff, "fast-forwarded", func(tensorcore.Mode, string) bool { return false },
			func(r, e LayerResult) []agreement {
				t.Logf("%s %s %s %s %v: %d cycles in full, %d fast-forwarded (%+.2f %%)", r.Layer, r.Mode,
					f.kernel, f.prec, f.sets, r.Cycles, e.Cycles, 100*(float64(e.Cycles)/float64(r.Cycles)-1))
				return []agreement{{"cycles", float64(r.Cycles), float64(e.Cycles), 0.02},
					{"l2 bytes", float64(r.L2Bytes), float64(e.L2Bytes), 0},
					{"metadata bytes", float64(r.MetadataBytes) + 1, float64(e.MetadataBytes) + 1, 0},
					{"dram read", float64(r.DRAMReadBytes), float64(e.DRAMReadBytes), 0.05},
					{"smem bytes", float64(r.SmemBytes), float64(e.SmemBytes), 0.03},
					{"tc util", r.TCUtilization, e.TCUtilization, 0.03}}
			})
	}
}

// The SM issue's checks on large squares (a100-40gb, FP16): dense over 90 %
// of the 312 TFLOPS peak, and a sparse speedup in the 1.3-1.8x band of the
// measured large GEMMs (validation/points: 1.38 for 3072x3072x10240, 1.60
// for 16384^3; the model gives 1.43 at 8192^3), not 2x, with the shortfall attributed to memory
// (shared memory or DRAM-fed stages) rather than left unexplained. Wave
// and K extrapolation keep it to minutes. The kernels are pinned to the
// ones the model's own selection picks at 8192^3 (`stcsim run --gemm
// 8192x8192x8192 --format json`, 2026-12-01: dense 128x128x32_64x64_s5,
// 5 137 966 cycles, runner-up +0.2 %; sparse 256x128x64_64x64_s3, 3 581 405
// cycles, runner-up +6.8 %), which costs a third of selecting them again.
func TestLargeSquareNearPeak(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	rep := run(t, gemmJob([3]int{8192, 8192, 8192}), "sim.extrapolate_waves=true",
		"kernel.force_dense=128x128x32_64x64_s5", "kernel.force_sparse=256x128x64_64x64_s3")
	dense, sparse := rep.Results[0], rep.Results[1]
	if dense.TFLOPS < 0.9*312 {
		t.Errorf("dense 8192^3 at %.1f TFLOPS, under 90 %% of peak", dense.TFLOPS)
	}
	if sparse.Speedup < 1.3 || sparse.Speedup > 1.8 {
		t.Errorf("sparse speedup %.3f outside [1.3, 1.8]", sparse.Speedup)
	}
	if b := sparse.Breakdown; b.Smem+b.DRAMBandwidth+b.DRAMLatency+b.L2Bandwidth+b.L2Latency < 0.5*(1-b.Compute) {
		t.Errorf("sparse breakdown %+v: memory explains under half of the idle time", b)
	}
}

// Wave extrapolation agrees with the full simulation within 2.5 % in
// cycles (32768x1024x1024 sparse +2.1 % since the booking windows count
// from the kernel's launch, +2.0 % or less before), 5 % in tensor-core utilization and DRAM writes, and 30 % in DRAM
// reads (+15.2 % to +23.1 % on 16384x2048x512 sparse when measured: the
// reads of the first waves, cold in L2, weigh on the steady increments) on
// the family above, but for its known misses (l2Resident, denseMiss).
// Kernels of very short CTAs miss by more and are not in it: 8192x8192x256
// with 64x64x64_32x32_s6, 4 k-steps per CTA, whose waves never settle into
// a steady step, extrapolates +6.1 % to +11.7 % in cycles (docs/sm.md).
func TestExtrapolationCloseToFull(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	for _, f := range extrapolationFamily {
		job := gemmJob(f.shape)
		force := "kernel.force=" + f.kernel
		full := run(t, job, force, "sim.extrapolate_waves=false", "sim.fast_forward=false")
		ext := run(t, job, force, "sim.extrapolate_waves=true")
		skip := func(mode tensorcore.Mode, name string) bool {
			return f.l2Resident && strings.HasPrefix(name, "dram") ||
				f.denseMiss && mode == tensorcore.Dense && (name == "cycles" || name == "tc util")
		}
		compareExtrapolated(t, full, ext, "extrapolated", skip, func(r, e LayerResult) []agreement {
			t.Logf("%s %s: %d cycles in full, %d extrapolated (%+.2f %%)", r.Layer, r.Mode, r.Cycles, e.Cycles,
				100*(float64(e.Cycles)/float64(r.Cycles)-1))
			return []agreement{{"cycles", float64(r.Cycles), float64(e.Cycles), 0.025},
				{"dram read", float64(r.DRAMReadBytes), float64(e.DRAMReadBytes), 0.30},
				{"dram write (kernel and write-back)",
					float64(r.DRAMWriteBytes + r.DRAMWritebackBytes),
					float64(e.DRAMWriteBytes + e.DRAMWritebackBytes), 0.05},
				{"tc util", r.TCUtilization, e.TCUtilization, 0.05}}
		})
	}
}

// gemvExtrapolationFamily are decode-shaped GEMVs (gemv_cudacore) on 16
// SMs, 4 to 9 CTAs per SM, 15 to 22 waves, 4 and 11 k-steps per CTA.
var gemvExtrapolationFamily = [][3]int{{4096, 1, 4096}, {4096, 4, 4096},
	{2048, 8, 4096}, {4096, 2, 11008}}

// Wave extrapolation of the CUDA-core GEMV, its unit of work the
// FP32-pipe instruction, agrees with the full simulation within 2 % in
// cycles, 3 % in energy, 6 % in the FP32 pipe's share of the time (its
// account) and 10 % in DRAM reads. Measured (docs/log/2026-12-07-llm-energy-and-speed.md):
// cycles +0.42 / -0.57 / +1.68 / -0.57 %, energy -2.72 / -2.41 / +1.00 /
// -0.35 %, FP32 share -2.23 / -5.03 / -1.65 / -0.05 %, DRAM reads -6.51 /
// -7.14 / -0.46 / +0.27 %. A GEMV of fewer than 4 k-steps is simulated
// whole (8192 x 1 x 1024: +3.15 % in cycles, -24 % in DRAM reads).
func TestGEMVExtrapolationCloseToFull(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	for _, shape := range gemvExtrapolationFamily {
		job := gemmJob(shape)
		job.Modes = []tensorcore.Mode{tensorcore.Dense}
		sets := []string{"gpu.sm_count=16", "kernel.force=" + configs.GEMVName}
		full := run(t, job, append(sets, "sim.extrapolate_waves=false")...)
		ext := run(t, job, sets...)
		compareExtrapolated(t, full, ext, "extrapolated", func(tensorcore.Mode, string) bool { return false },
			func(r, e LayerResult) []agreement {
				return []agreement{{"cycles", float64(r.Cycles), float64(e.Cycles), 0.02},
					{"energy", r.EnergyUJ, e.EnergyUJ, 0.03},
					{"fp32 share", r.Breakdown.Compute, e.Breakdown.Compute, 0.06},
					{"dram read", float64(r.DRAMReadBytes), float64(e.DRAMReadBytes), 0.10}}
			})
	}
}

// K extrapolation agrees with the full simulation within 2 % in cycles
// and 3 % in tensor-core utilization and shared-memory bytes on the family
// above. DRAM reads are not linear in K where L2 reuse changes with depth
// (-25.5 % on 2048x2048x8192 dense, -11.0 % on 1024x1024x16384 sparse when
// measured): held at 30 %, a known miss.
func TestKExtrapolationCloseToFull(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	for _, f := range kExtrapolationFamily {
		job := gemmJob(f.shape)
		job.Modes = f.modes
		force := "kernel.force=" + f.kernel
		full := run(t, job, force, "sim.extrapolate_ksteps=false", "sim.fast_forward=false")
		ext := run(t, job, force, "sim.extrapolate_ksteps=true")
		compareExtrapolated(t, full, ext, "extrapolated in K", func(tensorcore.Mode, string) bool { return false },
			func(r, e LayerResult) []agreement {
				return []agreement{{"cycles", float64(r.Cycles), float64(e.Cycles), 0.02},
					{"dram read", float64(r.DRAMReadBytes), float64(e.DRAMReadBytes), 0.30},
					{"smem bytes", float64(r.SmemBytes), float64(e.SmemBytes), 0.03},
					{"tc util", r.TCUtilization, e.TCUtilization, 0.03}}
			})
	}
}

// The FFN's down projection of Llama-2-7B's batch-1 decode
// (4096 x 1 x 11008) is held to TestDecodeAtTheDRAMBound's bounds: the
// dense kernel within 15 % of its bytes over the sustained DRAM
// bandwidth, no 2:4 kernel under the compressed-bytes ceiling. The
// default tier holds the same on the attention projections, a third as
// deep.
func TestDecodeDownProjectionAtTheDRAMBound(t *testing.T) {
	t.Parallel()
	_, down := decodeRows(t)
	checkDecodeAtTheDRAMBound(t, down)
}

// TestOneCTAPerSMTracksSettledWaves on the A100's 108 SMs: 4096x4096x256
// dense with 128x128x64_64x64_s3 (one CTA per SM, 10 waves), whose step
// over waves 1-3 extrapolated +2.9 % (70 980 cycles against 68 998 in
// full); over waves 4-6 it is within 1 %.
func TestOneCTAPerSMSettlesOnTheA100(t *testing.T) {
	t.Parallel()
	checkSettledWaves(t, [3]int{4096, 4096, 256})
}

// longCTAFewWavesMore are more kernels of long CTAs at two per SM, 6 and
// 7 waves on 8 SMs (TestLongCTAsExtrapolateFromFiveWaves' family):
// measured 2026-12-07 sparse +0.13 %, dense -0.04 % in cycles.
var longCTAFewWavesMore = []fewWaves{
	{[3]int{1024, 1536, 8192}, tensorcore.Sparse, "128x128x64_64x64_s3_splitk1", 6},
	{[3]int{1024, 1792, 4096}, tensorcore.Dense, "128x128x32_64x64_s5_splitk1", 7},
}

// Wave extrapolation from five waves at two CTAs per SM holds on more
// shapes on 8 SMs and on the A100 on Llama-2-7B's FFN gate/up projection
// at a 2048-token prefill (11008x2048x4096 dense, 128x128x32_64x64_s5,
// 7 waves of 216 CTAs, 128 k-steps each), the kernel it was made for:
// within 1 % in cycles and 2 % in tensor-core utilization (measured
// 2026-12-07 with the CLI: -0.08 %, 0.9302 against 0.9294).
func TestLongCTAsFewWavesOnTheA100(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	checkLongCTAFewWaves(t, longCTAFewWavesMore, "gpu.sm_count=8", "dram.bandwidth_gbps=115")
	checkLongCTAFewWaves(t, []fewWaves{{[3]int{11008, 2048, 4096}, tensorcore.Dense,
		"128x128x32_64x64_s5_splitk1", 7}})
}
