package gpu

import (
	"reflect"
	"testing"

	"github.com/stcsim/stcsim/sim/sm"
)

// A kernel's own cycles and counts do not depend on the cycle it starts
// at (sm.kernel_launch_latency): the shared servers count their booking
// windows from the kernel's launch (memory.Hierarchy.Launch), so a start
// off a 16-cycle window boundary moves nothing. Dense and sparse on the
// instruction-level SM, with the L2 cold and as a previous call left it
// (kernel.l2_start=repeat: hits, and in a small L2 the previous output
// written back within the kernel), parallel split-K's reduction (a
// second kernel on the same hierarchy, after a second gap), wave
// extrapolation and the fast-forward as configured.
func TestKernelIndependentOfItsStartCycle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		m, n, k  int
		sparse   bool
		force    string
		sets     []string
		launches uint64 // gaps in the result's cycles
	}{
		{512, 512, 256, false, "128x128x32_64x64_s5", []string{"gpu.sm_count=4"}, 1},
		{512, 1024, 512, true, "128x128x64_64x64_s3", []string{"gpu.sm_count=8", "kernel.l2_start=repeat"}, 1},
		// An L2 of 2.5 MiB: the previous call's output is written back
		// within the kernel, and its operands miss.
		{1024, 1024, 1024, false, "128x128x32_64x64_s5", []string{"gpu.sm_count=8", "kernel.l2_start=repeat",
			"l2.size_kb=2560"}, 1},
		{256, 256, 4096, false, "128x128x32_64x64_s5_splitk4", []string{"gpu.sm_count=8"}, 2},
	}
	for _, c := range cases {
		var base *Result
		for _, start := range []uint64{0, 1, 7, 15, 2890} {
			sets := append([]string{"sm.kernel_launch_latency=" + itoa(int(start))}, c.sets...)
			r := instrRun(t, c.m, c.n, c.k, c.sparse, c.force, sets...)
			what := func() string {
				return itoa(c.m) + "x" + itoa(c.n) + "x" + itoa(c.k) + " " + c.force + " " + itoa(int(start))
			}
			if base == nil {
				base = r
				t.Logf("%s %v: %d cycles, DRAM r %d w %d", what(), c.sets, r.Cycles,
					r.Mem.DRAMReadBytes, r.Mem.DRAMWriteBytes)
				continue
			}
			if got := r.Cycles - c.launches*start; got != base.Cycles {
				t.Errorf("%s %v started at %d: %d cycles, %d started at 0", what(), c.sets, start, got, base.Cycles)
			}
			same := func(field string, got, want any) {
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %v started at %d: %s %+v, %+v started at 0", what(), c.sets, start, field, got, want)
				}
			}
			same("memory", r.Mem, base.Mem)
			// The launch gap is itself idle time (sm.WhyLaunch; the split-K
			// reduction's, with the reduction, sm.WhyTail); the rest is the
			// kernel's.
			idle := r.Idle
			idle[sm.WhyLaunch] -= start * uint64(r.TCUnits)
			idle[sm.WhyTail] -= (c.launches - 1) * start * uint64(r.TCUnits)
			same("busy, idle", [2]any{r.Busy, idle}, [2]any{base.Busy, base.Idle})
			same("shared-memory bytes", r.SmemBytes, base.SmemBytes)
			same("write-back", [2]uint64{r.WritebackBytes, r.FlushCycles},
				[2]uint64{base.WritebackBytes, base.FlushCycles})
		}
	}
}
