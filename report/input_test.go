package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Workloads whose names map to one file name get distinct plot files
// (item 20: a/b and a_b overwrote each other's plots).
func TestPlotStemsAreDistinct(t *testing.T) {
	rep := sampleReport(2)
	for i := range rep.Results {
		if rep.Results[i].Workload == "resnet50" {
			rep.Results[i].Workload = "bert_large"
		}
	}
	for i := range rep.Totals {
		if rep.Totals[i].Workload == "resnet50" {
			rep.Totals[i].Workload = "bert_large"
		}
	}
	stems := plotStems(rep)
	if stems["bert_large"] == stems["bert/large"] {
		t.Fatalf("stems %v collide", stems)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteRun(dir, rep, loadDefault(t)); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, w := range []string{"bert_large", "bert/large"} {
		if !strings.Contains(string(md), stems[w]+"-speedup.png") {
			t.Errorf("report.md does not embed %s's speedup plot", w)
		}
	}
}

// A result that is not a finite number is an internal error found before
// anything is written (item 15).
func TestNonFiniteResultWritesNothing(t *testing.T) {
	rep := outputReport()
	rep.Results[0].TFLOPS = math.Inf(1)
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteRun(dir, rep, loadDefault(t)); err == nil ||
		!strings.Contains(err.Error(), "TFLOPS") {
		t.Errorf("WriteRun of +Inf: %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the output directory was created")
	}
}
