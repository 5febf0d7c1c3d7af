package report

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Text that a spreadsheet would run as a formula is neutralised; numbers
// are not (issue 13 item 18).
func TestCSVNeutralisesFormulas(t *testing.T) {
	rep := outputReport()
	rep.Results[0].Layer = "=HYPERLINK(\"http://x\")"
	rep.Results[0].Workload = "@SUM(A1)"
	rep.Results[0].Note = "-1.5"
	recs, err := csv.NewReader(strings.NewReader(string(CSV(rep)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	row := recs[1]
	if row[0] != "'@SUM(A1)" || row[1] != "'=HYPERLINK(\"http://x\")" {
		t.Errorf("workload %q layer %q not neutralised", row[0], row[1])
	}
	if got := row[len(row)-1]; got != "-1.5" {
		t.Errorf("a number %q was changed", got)
	}
	for _, s := range []string{"+1+1", "\tcmd", "\rcmd", "-cmd"} {
		if CSVText(s) != "'"+s {
			t.Errorf("CSVText(%q) = %q", s, CSVText(s))
		}
	}
}

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
