package validation

import (
	"math"
	"testing"
)

// gateRows are cheap measured rows the model must keep matching: a small
// held-out linear layer (dense and 2:4 sparse, the model's own kernel
// selection, under its harness's conditions: PyTorch's cuSPARSELt linear
// reads a C, calls back to back), the L2 bandwidth of the memory
// microbenchmark (the row l2.efficiency is calibrated on: the gate keeps
// it there), and the FP16 peak of the tensor-core microbenchmark.
// Each kind's tolerance is its goal in docs/validation.md as a bound on
// one row (held-out GEMM times 8 %; speedup 8 %, the goal's 6 % MAPE
// being over all rows, this one's -5.8 % among them; memory
// microbenchmarks 10 %; peaks 1 %: the published peak is an achieved
// one, 0.3 % under the whitepaper's). The measured values come from the
// points file, never from here.
var gateRows = []string{"linear-768x3072x3072", "bw-l2", "peak-fp16"}

var gateTolerance = map[string]float64{
	"gemm_dense_time": 0.08, "gemm_sparse_time": 0.08, "gemm_speedup": 0.08,
	"bandwidth": 0.10, "peak": 0.01,
}

// TestFidelityGate compares simulated cycles with measurements, so that
// a change that moves the model away from the hardware fails here and
// not only in a full `stcsim validate`.
func TestFidelityGate(t *testing.T) {
	if testing.Short() {
		t.Skip("a held-out linear layer, the memory and tensor-core microbenchmarks; run without -short")
	}
	t.Parallel()
	all, err := LoadPoints("points/a100-public.csv")
	if err != nil {
		t.Fatal(err)
	}
	var pts []Point
	for _, p := range all {
		for _, id := range gateRows {
			if p.ID == id {
				pts = append(pts, p)
			}
		}
	}
	if len(pts) != len(gateRows) {
		t.Fatalf("found %d of the gate rows %v in the points file", len(pts), gateRows)
	}
	rep, err := Run(pts, Options{Calibrated: DefaultCalibrated})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		tol, ok := gateTolerance[r.Kind]
		if !ok {
			t.Fatalf("%s: no tolerance for kind %s", r.ID, r.Kind)
		}
		seen[r.Kind] = true
		t.Logf("%-22s %-16s measured %9.4g simulated %9.4g %s (%+.1f %%, gate %.0f %%)",
			r.ID, r.Kind, r.Measured, r.Simulated, r.Unit, 100*r.Error, 100*tol)
		if math.Abs(r.Error) > tol {
			t.Errorf("%s %s: simulated %.4g vs measured %.4g %s: %+.1f %% is "+
				"outside the %.0f %% gate", r.ID, r.Kind, r.Simulated, r.Measured,
				r.Unit, 100*r.Error, 100*tol)
		}
	}
	if len(seen) != len(gateTolerance) {
		t.Errorf("compared kinds %v, want all of %v", seen, gateTolerance)
	}
}
