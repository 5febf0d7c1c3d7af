package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// On the default layout (tn: B column-major) a V:N:M GEMM runs: B is
// first copied row-major by a transpose launch of its own, then the same
// gather kernel runs as on a row-major B (tt). The tn run costs the tt
// run plus the copy: at least as long, by the copy's cycles, with B's
// bytes read and written by it on top of the kernel's traffic.
func TestVNMDefaultLayoutTransposesB(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"kernel.force_sparse=64x128x64_32x64_s4",
		"sim.extrapolate_waves=false", "sim.extrapolate_ksteps=false"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tensorcore.ParsePattern("64:2:8")
	if err != nil {
		t.Fatal(err)
	}
	const m, n, k = 256, 512, 1024
	run := func(rowB bool) (cycles, transpose, bDRAM uint64, name string) {
		r, err := Select(ld.Config, kernel.Shape{M: m, N: n, K: k, Batch: 1,
			Precision: tensorcore.FP16, Sparse: true, Pattern: p,
			Layout: kernel.Layout{RowB: rowB}}, nil)
		if err != nil {
			t.Fatalf("row-major B %v: %v", rowB, err)
		}
		return r.Cycles, r.TransposeCycles, r.Mem.PerClass[memory.BOperand].DRAMReadBytes, r.Plan.Name()
	}
	ttC, ttT, ttB, ttName := run(true)
	tnC, tnT, tnB, tnName := run(false)
	if ttT != 0 {
		t.Errorf("tt: %d transpose cycles, want none (B is already row-major)", ttT)
	}
	if tnT == 0 || tnC < ttC+tnT {
		t.Errorf("tn: %d cycles with a %d-cycle transpose, want at least tt's %d plus the copy",
			tnC, tnT, ttC)
	}
	if tnName != ttName {
		t.Errorf("tn ran %s, tt %s: the same gather kernel should run on the copy", tnName, ttName)
	}
	// The copy reads all of B (K x N fp16) from DRAM (its L2 starts cold).
	if want := ttB + uint64(k*n*2); tnB < want {
		t.Errorf("tn: %d B of B from DRAM, want at least tt's %d plus B once (%d)", tnB, ttB, k*n*2)
	}
}
