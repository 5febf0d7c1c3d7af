package gpu

import (
	"testing"

	"github.com/stcsim/stcsim/sim/kernel"
)

// The instruction-level SM's energy counts are what its warps issued:
// the instructions equal the programs' own (prologue, body per k-step,
// epilogue of every warp of every CTA), counted statically.
func TestSMActivityCountsWhatIssued(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kernel string
		sparse bool
	}{{"128x128x32_64x64_s5", false}, {"128x128x64_64x64_s3", true}} {
		r := instrRun(t, 512, 512, 1024, c.sparse, c.kernel)
		p := r.Plan
		var want uint64
		for idx := 0; idx < p.CTAs; idx++ {
			split := kernel.NewCTA(p, idx).Split
			for w := 0; w < p.Warps; w++ {
				prog := p.Program(w)
				want += uint64(len(prog.Prologue) + ctaSteps(p, split)*len(prog.Body) +
					len(prog.Epilogue))
			}
		}
		if got := r.Act.SM.Instructions; got != want {
			t.Errorf("%s: %d instructions counted, the programs have %d", c.kernel, got, want)
		}
		if r.Act.SM.RFReadBytes == 0 || r.Act.SM.RFWriteBytes == 0 {
			t.Errorf("%s: register-file bytes %+v", c.kernel, r.Act.SM)
		}
	}
}

// A kernel that issues more instructions and register traffic per MMA
// costs more SM energy per MMA: a 32x32 warp tile loads a fragment for
// every 4 MMAs where a 64x64 one loads one for every 8, and updates its
// addresses as often for half the MMAs.
func TestSMEnergyFollowsIssue(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t)
	perMMA := func(force string) (instrs, uj float64) {
		r := instrRun(t, 1024, 1024, 1024, false, force, "gpu.sm_count=16")
		b, err := cfg.Power.Energy(r.Act, r.Cycles, r.ClockMHz)
		if err != nil {
			t.Fatal(err)
		}
		mmas := float64(r.Act.DenseMMAs + r.Act.SparseMMAs)
		return float64(r.Act.SM.Instructions) / mmas, (b.Issue + b.RegisterFile) / mmas
	}
	bigI, bigE := perMMA("128x128x32_64x64_s5")
	smallI, smallE := perMMA("64x64x32_32x32_s10")
	if smallI <= bigI || smallE <= bigE {
		t.Errorf("instructions per MMA %.3f (32x32 warp tile) vs %.3f (64x64), SM energy "+
			"per MMA %.3g vs %.3g uJ: want both higher for the smaller warp tile",
			smallI, bigI, smallE, bigE)
	}
	t.Logf("per MMA: 64x64 warp tile %.3f instructions, %.3g uJ; 32x32 %.3f, %.3g uJ",
		bigI, bigE, smallI, smallE)
}
