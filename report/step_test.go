package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

func stepRecs() []results.LayerResult {
	rec := func(layer, pass string, mode tensorcore.Mode, us float64, count int) results.LayerResult {
		return results.LayerResult{Workload: "w", Layer: layer, Pass: pass, Mode: mode,
			TimeUS: us, Count: count, SparseApplied: mode == tensorcore.Sparse && pass != "dgrad",
			SparseAlong: "W along K (64)", Bound: "smem"}
	}
	return []results.LayerResult{
		rec("l.fwd", "forward", tensorcore.Dense, 10, 2),
		rec("l.fwd", "forward", tensorcore.Sparse, 5, 2),
		rec("l.dX", "dgrad", tensorcore.Dense, 8, 1),
		rec("l.dX", "dgrad", tensorcore.Sparse, 8, 1),
		rec("l.sparsify", "overhead", tensorcore.Sparse, 1, 1),
	}
}

// The step summary sums time x count per pass and mode: dense 2 x 10 +
// 8 = 28 µs, sparse 2 x 5 + 8 + 1 = 19 µs (the sparsifier counted), so
// 28 / 19 = 1.47x; a dense-run dX names no N:M operand.
func TestStepSummaryArithmetic(t *testing.T) {
	var b bytes.Buffer
	if !writeStepOf(&b, "w", stepRecs()) {
		t.Fatal("no step summary for training records")
	}
	out := b.String()
	for _, want := range []string{`step\s+28\.0\s+19\.0\s+1\.47x`,
		`forward \(Y = W X\)\s+20\.0\s+10\.0\s+2\.00x\s+53%`,
		`activation sparsifier\s+0\.0\s+1\.0\s+-\s+5%`,
		`l\.dX\s+dgrad\s+-\s+8\.0\s+8\.0\s+1\.00x`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	fig, err := stepPlot("w", stepRecs())
	if err != nil || fig == nil {
		t.Fatalf("step plot: %v, %v", fig, err)
	}
}

// An inference run has no step summary and no step plot.
func TestStepSummaryOnlyForTraining(t *testing.T) {
	recs := stepRecs()
	for i := range recs {
		recs[i].Pass = ""
	}
	var b bytes.Buffer
	if writeStepOf(&b, "w", recs) || strings.Contains(b.String(), "training step") {
		t.Error("an inference run got a step summary")
	}
	if fig, err := stepPlot("w", recs); fig != nil || err != nil {
		t.Errorf("an inference run got a step plot: %v", err)
	}
}
