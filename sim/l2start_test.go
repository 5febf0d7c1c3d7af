package sim

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// l2StartRun is the record of one mode of a GEMM on 16 SMs with a pinned
// kernel, its L2 starting as kernel.l2_start says.
func l2StartRun(t *testing.T, shape [3]int, mode tensorcore.Mode, start string, sets ...string) (cycles, dramRead, dramWrite uint64) {
	t.Helper()
	r := l2StartRecord(t, shape, mode, start, sets...)
	return r.Cycles, r.DRAMReadBytes, r.DRAMWriteBytes
}

// l2StartRecord is l2StartRun's whole record.
func l2StartRecord(t *testing.T, shape [3]int, mode tensorcore.Mode, start string, sets ...string) *results.LayerResult {
	t.Helper()
	job := gemmJob(shape)
	job.Modes = []tensorcore.Mode{mode}
	sets = append([]string{"gpu.sm_count=16", "kernel.force=128x128x64_64x64_s3",
		"kernel.split_k=[1]", "kernel.l2_start=" + start}, sets...)
	return &run(t, job, sets...).Results[0]
}

// TestRepeatStartFindsTheOperandsInL2: a GEMM whose operands and output
// fit in the L2, run again back to back, reads nothing from DRAM, and is
// no slower than the cold call, which reads every operand once.
func TestRepeatStartFindsTheOperandsInL2(t *testing.T) {
	t.Parallel()
	shape := [3]int{1024, 1024, 1024}
	for _, mode := range tensorcore.Modes {
		cold, coldRead, _ := l2StartRun(t, shape, mode, configs.L2Cold)
		warm, warmRead, _ := l2StartRun(t, shape, mode, configs.L2Repeat)
		if coldRead == 0 {
			t.Fatalf("%s: the cold call read nothing from DRAM", mode)
		}
		if warmRead != 0 {
			t.Errorf("%s: the repeated call read %d bytes from DRAM; its operands (%d bytes at most) were all in L2",
				mode, warmRead, 3*1024*1024*2)
		}
		if warm > cold {
			t.Errorf("%s: the repeated call took %d cycles, the cold one %d", mode, warm, cold)
		}
	}
}

// TestRepeatStartCoversEverySchedule: the replay follows split-K,
// serial split-K (its semaphores) and stream-K (its segments) as it does
// data-parallel CTAs: a GEMM that fits in L2 reads nothing from DRAM.
func TestRepeatStartCoversEverySchedule(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"128x128x32_64x64_s5_splitk2", "128x128x32_64x64_s5_serialk2",
		"128x128x32_64x64_s5_streamk"} {
		job := gemmJob([3]int{1024, 1024, 1024})
		job.Modes = []tensorcore.Mode{tensorcore.Dense}
		r := run(t, job, "gpu.sm_count=16", "kernel.stream_k=true", "kernel.serial_split_k=true",
			"kernel.force="+k, "kernel.l2_start=repeat").Results[0]
		if r.Kernel != k || r.DRAMReadBytes != 0 {
			t.Errorf("%s: ran %s, read %d bytes from DRAM, want none", k, r.Kernel, r.DRAMReadBytes)
		}
	}
}

// TestRepeatStartWritesBackThePreviousOutput: a GEMM whose output is
// larger than the L2 finds the L2 full of the previous call's dirty
// output, and writes it back within the call: more DRAM writes than the
// cold call, which finds clean (empty) lines to evict. Both runs are
// wave-extrapolated (64 waves, 4 simulated in the cold run), and each
// writes what a call writes: the cold call its output, within the kernel
// and in the write-back after it (each line once: at least D's bytes,
// at most 5 % more); the repeated call, as a benchmark loop's calls do in
// turn, one output's worth within the kernel (within 5 %): what it
// leaves dirty, the next call writes back. No call moves more DRAM bytes
// per second than the DRAM's peak.
func TestRepeatStartWritesBackThePreviousOutput(t *testing.T) {
	t.Parallel()
	shape := [3]int{4096, 8192, 64} // D: 64 MiB of fp16, the L2 40 MiB
	out := float64(shape[0] * shape[1] * 2)
	cold := l2StartRecord(t, shape, tensorcore.Dense, configs.L2Cold)
	warm := l2StartRecord(t, shape, tensorcore.Dense, configs.L2Repeat)
	if warm.DRAMWriteBytes <= cold.DRAMWriteBytes {
		t.Errorf("repeated call: %d bytes written to DRAM within the kernel, the cold call %d: "+
			"want more (the previous call's dirty output evicted)", warm.DRAMWriteBytes, cold.DRAMWriteBytes)
	}
	if w := float64(cold.DRAMWriteBytes+cold.DRAMWritebackBytes) / out; w < 1 || w > 1.05 {
		t.Errorf("cold call: %d + %d bytes written to DRAM, %.3fx the output's %.0f: want 1-1.05x",
			cold.DRAMWriteBytes, cold.DRAMWritebackBytes, w, out)
	}
	if w := float64(warm.DRAMWriteBytes) / out; w < 0.95 || w > 1.05 {
		t.Errorf("repeated call: %d bytes written to DRAM within the kernel, %.3fx the output's %.0f: "+
			"want 0.95-1.05x (one call's output written back per call)", warm.DRAMWriteBytes, w, out)
	}
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	peak := ld.Config.Memory.DRAM.BandwidthGBps
	for _, r := range []*results.LayerResult{cold, warm} {
		if !strings.Contains(r.Note, "extrapolated from") {
			t.Errorf("%s: not wave-extrapolated; the test is of the extrapolated counts", r.Kernel)
		}
		if r.DRAMGBps > peak {
			t.Errorf("%.1f GB/s through DRAM, above the %.1f GB/s peak", r.DRAMGBps, peak)
		}
	}
}

// TestRepeatStartNeedsTheFastHierarchy: the detailed hierarchy cannot be
// preloaded, so the config says so before anything runs.
func TestRepeatStartNeedsTheFastHierarchy(t *testing.T) {
	t.Parallel()
	_, err := configs.Load(nil, []string{"kernel.l2_start=repeat", "sim.memory_granularity=detailed"})
	if err == nil || !strings.Contains(err.Error(), "kernel.l2_start") {
		t.Fatalf("got %v, want an error naming kernel.l2_start", err)
	}
	if _, err := configs.Load(nil, []string{"kernel.l2_start=warm"}); err == nil ||
		!strings.Contains(err.Error(), "kernel.l2_start") {
		t.Fatalf("got %v, want an error naming kernel.l2_start", err)
	}
}

// TestFastTierLeavesTheRepeatStartToTheInstructionTier: the analytical
// tier does not model a warm L2, so it hands such a kernel to the
// instruction tier and says why, rather than time it cold.
func TestFastTierLeavesTheRepeatStartToTheInstructionTier(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 512, 512})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	r := run(t, job, "gpu.sm_count=16", "sim.fidelity=fast", "kernel.l2_start=repeat").Results[0]
	if r.Fidelity != configs.FidelityInstruction || !strings.Contains(r.Note, "l2_start") {
		t.Fatalf("fidelity %q, note %q: want the instruction tier and a note naming kernel.l2_start",
			r.Fidelity, r.Note)
	}
}
