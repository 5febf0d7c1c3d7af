package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// Moved from package sim: the V:N:M kernels as the selection runs them.

// vnmKernel simulates the sparse fp16 GEMM m x n x k (layout tt, B
// row-major as the V:N:M kernel needs) of pattern pat on the 64x128
// sparse tile, every wave.
func vnmKernel(t *testing.T, m, n, k int, pat string) *gpu.Result {
	t.Helper()
	ld, err := configs.Load(nil, []string{"kernel.force_sparse=64x128x64_32x64_s4",
		"sim.extrapolate_waves=false", "sim.extrapolate_ksteps=false"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tensorcore.ParsePattern(pat)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Select(ld.Config, kernel.Shape{M: m, N: n, K: k, Batch: 1,
		Precision: tensorcore.FP16, Sparse: true, Pattern: p,
		Layout: kernel.Layout{RowB: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// At fixed V and K, a V:N:M operand with a wider group M keeps fewer
// columns (4 of M gathered), so the kernel runs fewer 2:4 MMAs and copies
// fewer rows of B: its time falls as M grows, and since the dense
// kernel does not change, its speedup rises.
func TestVNMSpeedupRisesWithM(t *testing.T) {
	t.Parallel()
	var last uint64
	for _, pat := range []string{"64:2:8", "64:2:16", "64:2:32"} {
		r := vnmKernel(t, 512, 1024, 2048, pat)
		if last != 0 && r.Cycles >= last {
			t.Errorf("%s: %d cycles, not below the narrower group's %d", pat, r.Cycles, last)
		}
		last = r.Cycles
	}
}

// The gather's cost falls as V grows: CTAs of one V block read the same
// rows of B, so with fewer, taller blocks fewer distinct rows of B cross
// DRAM (the L2 starts cold), and fewer column indices do.
func TestVNMGatherCostFallsWithV(t *testing.T) {
	t.Parallel()
	var lastB, lastMeta uint64
	for i, pat := range []string{"64:2:16", "256:2:16", "1024:2:16"} {
		r := vnmKernel(t, 1024, 512, 2048, pat)
		b := r.Mem.PerClass[memory.BOperand].DRAMReadBytes
		meta := r.Mem.PerClass[memory.AMeta].DRAMReadBytes
		if i > 0 && (b >= lastB || meta >= lastMeta) {
			t.Errorf("%s: B %d and metadata %d DRAM bytes, not below the shorter V's %d and %d",
				pat, b, meta, lastB, lastMeta)
		}
		lastB, lastMeta = b, meta
	}
	// One V block of all 1024 rows reads each gathered row of B once: 4
	// of every 16 of K's rows, N wide.
	r := vnmKernel(t, 1024, 512, 2048, "1024:2:16")
	if got, want := r.Mem.PerClass[memory.BOperand].DRAMReadBytes, uint64(2048*4/16*512*2); got != want {
		t.Errorf("one V block: %d B of B from DRAM, want %d (the gathered rows once)", got, want)
	}
}
