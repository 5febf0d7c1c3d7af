//go:build long

package fast_test

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// The fast tier against the instruction-level SM, per GEMM, on 16 SMs,
// each GEMM on the plan the pre-model ranks first. fast.FamilyError is
// what this family showed (the goal is 10 % per GEMM, not met
// by dense K = 256 GEMMs, under-timed by up to 10.6 %: their CTAs'
// start and end, which the tier times as latencies, are a third of
// their time); the test fails if the
// family's error is outside it, so that what config show prints and
// fast records carry stays true.
func TestAgreesWithInstructionTier(t *testing.T) {
	cfg := config(t)
	var errs []float64
	for _, g := range family() {
		p := best(t, cfg, g)
		e, got, want := relErr(t, cfg, p)
		errs = append(errs, e)
		t.Logf("%dx%dx%d sparse=%v %s: fast %d, instruction %d (%+.1f %%)",
			g.M, g.N, g.K, g.Sparse, p.Name(), got, want, 100*e)
	}
	holdsTo(t, fast.FamilyError, errs)
}

// The README's first command (ResNet-50 and BERT-Large at batch 32, both
// modes, the A100-40GB) on both tiers, each selecting its own kernel:
// per layer record, the error is within fast.SuiteError.
func TestReferenceSuiteAgrees(t *testing.T) {
	var job sim.Job
	for _, m := range []string{"resnet50", "bert-large"} {
		w, err := workloads.Model(m, 32, 128)
		if err != nil {
			t.Fatal(err)
		}
		job.Workloads = append(job.Workloads, w)
	}
	job.Modes = tensorcore.Modes
	reps := map[string]*sim.Report{}
	for _, f := range configs.Fidelities {
		ld, err := configs.Load(nil, []string{"sim.fidelity=" + f})
		if err != nil {
			t.Fatal(err)
		}
		if reps[f], err = sim.Run(ld, job); err != nil {
			t.Fatal(err)
		}
	}
	var errs []float64
	for i, in := range reps[configs.FidelityInstruction].Results {
		f := reps[configs.FidelityFast].Results[i]
		e := float64(f.Cycles)/float64(in.Cycles) - 1
		errs = append(errs, e)
		t.Logf("%s %s %s: fast %d (%s), instruction %d (%s): %+.1f %%",
			in.Workload, in.Layer, in.Mode, f.Cycles, f.Kernel, in.Cycles, in.Kernel, 100*e)
	}
	holdsTo(t, fast.SuiteError, errs)
}

// holdsTo fails if errs (fractions) fall outside the stated measurement
// m (fast.FamilyError or fast.SuiteError; export_test.go).
func holdsTo(t *testing.T, m fast.Measurement, errs []float64) {
	t.Helper()
	line, err := m.Holds(errs)
	t.Log(line)
	if err != nil {
		t.Error(err)
	}
}

// gemvShapes are the CUDA-core GEMVs the tiers are compared over:
// decode shapes of 1-8 tokens, DRAM-, FP32-pipe- and latency-bound,
// each on 16 and 108 SMs.
var gemvShapes = [][3]int{{1024, 1, 4096}, {4096, 1, 4096}, {1024, 8, 4096},
	{4096, 4, 4096}, {256, 2, 11008}, {4096, 8, 1024}}

// The fast tier's GEMV (kernel.GEMV) against the instruction-level SM:
// per GEMV, the error is within fast.GEMVError, which GEMV fast records
// carry.
func TestAgreesOnGEMVs(t *testing.T) {
	var errs []float64
	for _, s := range gemvShapes {
		for _, sms := range []string{"gpu.sm_count=16", "gpu.sm_count=108"} {
			e, got, want := relErr(t, config(t, sms), gemvPlan(t, config(t, sms), s))
			errs = append(errs, e)
			t.Logf("%v %s: fast %d, instruction %d (%+.1f %%)", s, sms, got, want, 100*e)
		}
	}
	holdsTo(t, fast.GEMVError, errs)
}
