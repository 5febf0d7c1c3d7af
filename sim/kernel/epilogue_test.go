package kernel

import (
	"fmt"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestEpilogueAsCUTLASS holds a warp's epilogue to CUTLASS 2.x's default
// sm80 epilogue for a half output of FP32 accumulators
// (epilogue/threadblock/epilogue.h, default_epilogue_tensor_op.h):
// warp_m / 8 iterations, each with two barriers (less the very first,
// left out: storeTile says why); the accumulators staged
// through shared memory in FP32 (every accumulator byte stored and
// loaded once), D stored once at its own width; with a source, each
// iteration's C loaded before its first barrier and added only after the
// shared-memory load, so that its latency overlaps the staging.
func TestEpilogueAsCUTLASS(t *testing.T) {
	for _, beta := range []float64{0, 1} {
		ld, err := configs.Load(nil, []string{fmt.Sprintf("kernel.beta=%g", beta)})
		if err != nil {
			t.Fatal(err)
		}
		g := Shape{M: 1024, N: 1024, K: 256, Batch: 1, Precision: tensorcore.FP16}
		p, err := New(ld.Config, g, denseTile, 1)
		if err != nil {
			t.Fatal(err)
		}
		epi := p.Program(0).Epilogue
		var bars, sts, lds, stg, ldg int
		sawLDS, cBeforeBar, aluAfterLDS := false, true, true
		for _, in := range epi {
			switch in.Op {
			case isa.OpBAR:
				bars++
			case isa.OpSTS:
				sts += int(in.Bytes)
			case isa.OpLDS:
				lds += int(in.Bytes)
				sawLDS = true
			case isa.OpSTG:
				stg += int(in.Bytes)
				sawLDS = false
			case isa.OpLDG:
				ldg += int(in.Bytes)
				if sawLDS {
					cBeforeBar = false
				}
			case isa.OpALU:
				if !sawLDS {
					aluAfterLDS = false
				}
			}
		}
		tile := denseTile.WarpM * denseTile.WarpN
		if want := 2*denseTile.WarpM/8 - 1; bars != want {
			t.Errorf("beta %g: %d barriers, want %d (two per 8 rows, less the first)", beta, bars, want)
		}
		if want := tile * AccumulatorBytes; sts != want || lds != want {
			t.Errorf("beta %g: STS %d B, LDS %d B, want %d each (FP32 staging)", beta, sts, lds, want)
		}
		if want := tile * 2; stg != want || ldg != int(beta)*want {
			t.Errorf("beta %g: STG %d B, LDG %d B, want %d and %d", beta, stg, ldg, want, int(beta)*want)
		}
		if !cBeforeBar || !aluAfterLDS {
			t.Errorf("beta %g: C loaded before the staging %v, output operator after the shared load %v: want both",
				beta, cBeforeBar, aluAfterLDS)
		}
	}
}
