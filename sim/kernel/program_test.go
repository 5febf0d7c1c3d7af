package kernel

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// The streams do the GEMM's math: MMAs over all warps and k-steps times
// the instruction's FMAs equal the tile's logical FMAs, and every stage
// byte is copied by exactly one LDGSTS per k-step.
func TestProgramCoversTheTile(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	for _, c := range []struct {
		kernel string
		sparse bool
	}{{"128x128x32_64x64_s5", false}, {"128x128x64_64x64_s3", true},
		{"64x64x64_32x32_s6", true}, {"256x128x64_64x64_s3", false}} {
		g := Shape{M: 4096, N: 4096, K: 4096, Batch: 1, Precision: tensorcore.FP16, Sparse: c.sparse}
		var p *Plan
		for _, tl := range cfg.Kernel.Candidates {
			if tl.Name() == c.kernel {
				var err error
				if p, err = New(cfg, g, tl, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		if p == nil {
			t.Fatalf("no tile %s", c.kernel)
		}
		mmas, copies := 0, 0
		for w := 0; w < p.Warps; w++ {
			n := isa.Counts(p.Program(w).Body)
			mmas += n[isa.OpMMA] + n[isa.OpMMASP]
			copies += n[isa.OpLDGSTS]
		}
		logical := p.Tile.BM * p.Tile.BN * p.Tile.BK
		if got := mmas * p.Inst.FMAs(); got != logical {
			t.Errorf("%s: MMAs per k-step do %d FMAs, the tile %d", c.kernel, got, logical)
		}
		stage := p.AStageB + p.BStageB + p.MetaStageB
		if got := copies * ChunkBytes; got < stage || got >= stage+3*ChunkBytes {
			t.Errorf("%s: LDGSTS per k-step copy %d B, the stage is %d B", c.kernel, got, stage)
		}
	}
}
