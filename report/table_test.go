package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
)

// The terminal table answers "why not 2x" on each sparse row: the
// largest cause of its loss and that cause's share, as report.md's split
// does at length. Dense rows and sparse rows with no loss leave it empty.
func TestTableSaysWhyNot2x(t *testing.T) {
	rep := sampleReport(2)
	s := &rep.Results[1]
	s.LossUS = 12.5
	s.Loss = results.Breakdown{Smem: 0.65, DRAMBandwidth: 0.2, Tail: 0.15}
	w := &rep.Results[3]
	w.LossUS = 3
	w.Loss = results.Breakdown{Smem: 0.1, Waves: 0.9}
	var b bytes.Buffer
	Table(&b, rep)
	out := b.String()
	if !strings.Contains(out, "why not 2x") {
		t.Fatalf("no why-not-2x column:\n%s", out)
	}
	rows := strings.Split(out, "\n")
	find := func(layer, mode string) string {
		for _, r := range rows {
			if strings.Contains(r, " "+layer) && strings.Contains(r, " "+mode+" ") {
				return r
			}
		}
		t.Fatalf("no %s %s row:\n%s", layer, mode, out)
		return ""
	}
	if r := find("layer0.conv", "sparse"); !strings.Contains(r, "smem 65%") {
		t.Errorf("sparse row lacks its largest loss cause: %q", r)
	}
	if r := find("layer1.conv", "sparse"); !strings.Contains(r, "waves 90%") {
		t.Errorf("sparse row lacks its largest loss cause: %q", r)
	}
	if r := find("layer0.conv", "dense"); strings.Contains(r, "%  ") && strings.Contains(r, "smem") {
		t.Errorf("dense row names a loss: %q", r)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "why not 2x sparse rows: the largest cause") {
		t.Errorf("legend does not explain the column:\n%s", out)
	}
}

// A merged layer name that does not fit keeps its first layer and says
// how many more it stands for, instead of hiding the "+" in an ellipsis.
func TestFitKeepsTheMergeVisible(t *testing.T) {
	name := "encoder.{0-23}.attention.output.dense+decoder.{0-5}.ffn.out+pooler.dense"
	got := fit(name, 30)
	if !strings.HasSuffix(got, "+2 more") || len([]rune(got)) > 30 {
		t.Errorf("fit(%q, 30) = %q", name, got)
	}
	if !strings.HasPrefix(got, "encoder.") {
		t.Errorf("fit lost the first layer's start: %q", got)
	}
	if got := fit("a+b", 30); got != "a+b" {
		t.Errorf("a name that fits changed: %q", got)
	}
	if got := fit("layer1.0.conv.with.a.long.name", 12); len([]rune(got)) != 12 || !strings.Contains(got, "…") {
		t.Errorf("plain name not cut to width: %q", got)
	}
}

// A memory-bound sparse row's "why not 2x" is its traffic ceiling, a
// sparse row slower than dense says so, and an LLM's totals are read as
// tokens.
func TestTableReadsLLMs(t *testing.T) {
	rep := sampleReport(2)
	rep.Results[1].Traffic = &results.Traffic{Ceiling: 1.7234}
	rep.Results[3].Speedup = 0.94
	rep.Totals[1].TokenRate = results.TokenRate{Phase: "decode", Tokens: 4,
		TokensPerS: 400, MSPerOutputToken: 10, EnergyPerTokenMJ: 1250}
	var b bytes.Buffer
	Table(&b, rep)
	out := b.String()
	for _, want := range []string{"bytes ≤1.72x", "0.94x slower", "tokens/s", "400.0", "10.000", "1250.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
