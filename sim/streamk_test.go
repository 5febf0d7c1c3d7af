package sim

import (
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// streamKTile is the stream-K issue's tile: CUTLASS's 128x128x32 FP16
// tile (5 stages here, 2 CTAs per SM; sim/gpu's stream-K tests run it).
const streamKTile = "128x128x32_64x64_s5"

// The record carries the schedule, the tail and the fix-up: a pinned
// stream-K kernel's name round-trips, its record has nonzero fix-up
// bytes and waits, and the data-parallel record of the same 1.25-wave
// GEMM has a tail of at least a sixth of its time (its second wave runs
// 8 tiles on 32 slots) and no fix-up.
func TestRecordsCarryTailAndFixup(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{640, 1024, 2048})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	sk := run(t, job, "gpu.sm_count=16", "kernel.force="+streamKTile+"_streamk").Results[0]
	dp := run(t, job, "gpu.sm_count=16", "kernel.force="+streamKTile).Results[0]
	if sk.Kernel != streamKTile+"_streamk" || sk.Schedule != "stream_k" {
		t.Errorf("pinned stream-K ran %s (%s)", sk.Kernel, sk.Schedule)
	}
	if sk.FixupBytes == 0 || sk.FixupWaitCycles == 0 || sk.TailCycles == 0 {
		t.Errorf("stream-K record: tail %d, fix-up %d B, %d wait cycles; want all nonzero",
			sk.TailCycles, sk.FixupBytes, sk.FixupWaitCycles)
	}
	if dp.Schedule != "data_parallel" || dp.FixupBytes != 0 || dp.FixupWaitCycles != 0 ||
		dp.TailCycles < dp.Cycles/6 || dp.TailCycles >= dp.Cycles {
		t.Errorf("data-parallel record: %s, %d cycles, tail %d, fix-up %d B, %d wait cycles",
			dp.Schedule, dp.Cycles, dp.TailCycles, dp.FixupBytes, dp.FixupWaitCycles)
	}
}
