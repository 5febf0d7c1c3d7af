package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
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
	if r := find("layer0.conv", "sparse"); !strings.Contains(r, "smem 65% dram_bw 20%") {
		t.Errorf("sparse row lacks its largest loss cause: %q", r)
	}
	if r := find("layer1.conv", "sparse"); !strings.Contains(r, "waves 90%") {
		t.Errorf("sparse row lacks its largest loss cause: %q", r)
	}
	if r := find("layer0.conv", "dense"); strings.Contains(r, "%  ") && strings.Contains(r, "smem") {
		t.Errorf("dense row names a loss: %q", r)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "why not 2x sparse rows: the two largest causes") {
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

// "Why not 2x" gives the two largest causes as shares of the loss that
// grew: a cause that shrank by more than the ideal (a negative share)
// would otherwise push the others above 100 %.
func TestWhyNot2xSharesSumToAtMost100(t *testing.T) {
	r := results.LayerResult{Mode: tensorcore.Sparse, SparseApplied: true}
	r.LossUS = 2
	r.Loss = results.Breakdown{Waves: 1.15, Smem: 0.1, Tail: 0.05, Compute: -0.3}
	if got, want := lossCell(r), "waves 88% smem 8%"; got != want {
		t.Errorf("lossCell = %q, want %q", got, want)
	}
	r.Loss = results.Breakdown{Smem: 1}
	if got := lossCell(r); got != "smem 100%" {
		t.Errorf("one cause: lossCell = %q", got)
	}
}

// The fast tier computes no occupancy, breakdown, phases or event
// energy: those cells print "-", not a 0 that reads as measured.
func TestFastTierFieldsAreDashes(t *testing.T) {
	rep := sampleReport(2)
	for i := range rep.Results {
		rep.Results[i].Fidelity = configs.FidelityFast
		rep.Results[i].EnergyUJ = 500 // static only
		rep.Results[i].Bound = ""
		rep.Results[i].LossUS = 0
		rep.Results[i].UsefulUtilization = 0.5
	}
	var b bytes.Buffer
	TableWithin(&b, rep, 0)
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "layer0.conv") {
			if strings.Contains(line, " 0% ") || strings.Contains(line, " 0.5 ") {
				t.Errorf("fast-tier row shows an uncomputed field as a number: %q", line)
			}
			if strings.Count(line, " - ") < 4 { // TC busy, mJ, bound, fixed
				t.Errorf("fast-tier row lacks its dashes: %q", line)
			}
		}
	}
	if !strings.Contains(b.String(), "-: a field the fast tier does not compute") {
		t.Errorf("legend does not explain the dashes:\n%s", b.String())
	}
}

// Wide cells in every column (a power-capped run's clocks, energy, the
// longest cause names, ResNet's widest shape, three notes) still fit
// 120 columns with readable names: the optional columns make room, and
// the legend names them.
func TestTableFitsWithTheWidestCells(t *testing.T) {
	rep := sampleReport(6)
	for i := range rep.Results {
		r := &rep.Results[i]
		r.Layer = fmt.Sprintf("encoder.{0-23}.attention.output.dense%d", i/2)
		r.M, r.N, r.K = 1024, 100352, 4608
		r.Count, r.TimeUS, r.TFLOPS = 24, 10666.5, 1234.5
		r.ClockMHz, r.AbovePowerLimit = 1100+i, true
		r.EnergyUJ, r.Bound = 123456, "wave_quantization"
		r.Phases = results.Phases{Launch: 0.5, Mainloop: 0.5}
		r.Note = fmt.Sprintf("a; b; note %d", i%2)
		if r.Mode == tensorcore.Sparse {
			r.LossUS, r.Speedup = 3, 0.95
			r.Loss = results.Breakdown{DRAMLatency: 0.5, L2Latency: 0.5}
		}
	}
	var b bytes.Buffer
	Table(&b, rep)
	out := b.String()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > TableWidth {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	for _, want := range []string{"l2_lat 50% dram_lat 50%", "1100!", "encoder.", "--wide shows them"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// A memory-bound sparse row's "why not 2x" is its traffic ceiling and
// an LLM's totals are read as tokens.
func TestTableReadsLLMs(t *testing.T) {
	rep := sampleReport(2)
	rep.Results[1].Traffic = &results.Traffic{Ceiling: 1.7234}
	rep.Results[3].Speedup = 0.94
	rep.Totals[1].TokenRate = results.TokenRate{Phase: "decode", Tokens: 4,
		TokensPerS: 400, MSPerOutputToken: 10, EnergyPerTokenMJ: 1250}
	var b bytes.Buffer
	TableWithin(&b, rep, 0)
	out := b.String()
	for _, want := range []string{"bytes ≤1.72x", "0.94x", "tokens/s", "400.0", "10.000", "1250.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// A locked run with kernels above the board's limit gives its totals
// under power_capped too, one line per workload and mode with the clocks.
func TestTableGivesPowerCappedTotals(t *testing.T) {
	rep := sampleReport(2)
	rep.PowerCapped = []results.ClockTotal{
		{Workload: "resnet50", Mode: tensorcore.Dense, Policy: "power_capped", LimitW: 400,
			TimeUS: 1650.25, MinClockMHz: 1245, MaxClockMHz: 1410},
		{Workload: "resnet50", Mode: tensorcore.Sparse, Policy: "power_capped", LimitW: 400,
			TimeUS: 1450, Speedup: 1.138, MinClockMHz: 1395, MaxClockMHz: 1395},
	}
	var b bytes.Buffer
	Table(&b, rep)
	out := b.String()
	for _, want := range []string{"board's 400 W at the locked clock",
		"resnet50   dense  1650.2 µs per pass  at 1245-1410 MHz",
		"resnet50  sparse  1450.0 µs per pass       at 1395 MHz  1.138x"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	md := string(Markdown(rep, loadDefault(t), nil))
	if !strings.Contains(md, "| resnet50 | sparse | 1450.0 | 1395 | 1.138x |") {
		t.Errorf("report.md lacks the power-capped totals:\n%s", md)
	}
	rep.PowerCapped = nil
	b.Reset()
	Table(&b, rep)
	if strings.Contains(b.String(), "power_capped (each kernel") {
		t.Error("power-capped totals without any")
	}
}
