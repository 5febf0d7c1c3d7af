package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

func outputReport() *results.Report {
	r := results.LayerResult{Workload: "w", Layer: "l", M: 1, N: 2, K: 4,
		Batch: 1, Precision: tensorcore.FP16, Mode: tensorcore.Sparse, SparseApplied: true,
		Count: 1, Kernel: "k", SplitK: 1, Cycles: 10, TimeUS: 1, TFLOPS: 2,
		Speedup: 1.5, Note: "n", Cache: "miss", Explain: results.Explain{CTAs: 8, Waves: 1,
			CTAsPerSM: 2, OccupancyLimit: "registers", IdealSpeedup: 2,
			LossUS: 0.25, Loss: results.Breakdown{DRAMBandwidth: 1}}}
	r.Power = results.Power{ClockMHz: 1410, EnergyUJ: 3, AvgPowerW: 3, EnergySaving: 1.2}
	return &results.Report{Tool: "stcsim", Version: results.Version, Config: "c",
		Results: []results.LayerResult{r},
		Totals:  []results.Total{{Workload: "w", Mode: tensorcore.Sparse, TimeUS: 1}}}
}

func TestWriteRunWritesEveryFileAtomically(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteRun(dir, outputReport(), ld); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.csv", "results.json", "config.yaml", "report.md"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if st.Mode().Perm()&0o044 != 0o044 {
			t.Errorf("%s mode %v: not readable by others", f, st.Mode())
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if !bytes.Contains(cfg, []byte("sm_count: 108")) {
		t.Errorf("config.yaml is not the effective config:\n%s", cfg)
	}
}

func TestWriteAtomicFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "results.csv")
	if err := WriteAtomic(path, []byte("x")); err == nil {
		t.Fatal("want an error for a missing directory")
	}
	good := filepath.Join(dir, "r.csv")
	if err := WriteAtomic(good, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(good, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(good); string(b) != "new" {
		t.Fatalf("got %q", b)
	}
}

// A sparse-only run has no dense record to compare with: the table leaves
// the speedup empty instead of printing 0.00x.
func TestTableSpeedupOnlyWithDense(t *testing.T) {
	rep := outputReport()
	rep.Results[0].Speedup = 0
	var b bytes.Buffer
	Table(&b, rep)
	if strings.Contains(b.String(), "0.00x") || strings.Contains(b.String(), "0.000x") {
		t.Errorf("sparse-only table shows a zero speedup:\n%s", b.String())
	}
	rep = outputReport()
	rep.Totals[0].Speedup = 1.25
	b.Reset()
	Table(&b, rep)
	for _, want := range []string{"1.50x", "1.250x"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %s:\n%s", want, b.String())
		}
	}
}

// The default table fits 120 columns even with long layer names, shows
// the count, marks notes and lists them, labels int8 throughput TOPS and
// explains its terms in a legend.
func TestTableFitsAndExplainsItself(t *testing.T) {
	rep := sampleReport(4)
	rep.Results[0].Layer = "encoder.{0-23}.attention.context.with.a.very.long.name.indeed"
	rep.Results[1].Layer = rep.Results[0].Layer
	rep.Results[2].Note = "K padded 1030->1032 for the sparse kernel"
	var b bytes.Buffer
	Table(&b, rep)
	out := b.String()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > TableWidth {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	for _, want := range []string{"count", "TFLOPS", "[1]", "notes:",
		"[1] K padded 1030->1032", "legend:", "µs/call", "of dense", "bound", "fixed",
		"(d)", "encoder.{0-"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// --wide: every column and whole names.
	b.Reset()
	TableWithin(&b, rep, 0)
	for _, want := range []string{"TC busy", "of dense", rep.Results[0].Layer} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("wide table lacks %q:\n%s", want, b.String())
		}
	}
	for i := range rep.Results {
		rep.Results[i].Precision = tensorcore.INT8
	}
	b.Reset()
	Table(&b, rep)
	if !strings.Contains(b.String(), "TOPS") || strings.Contains(b.String(), "TFLOPS") {
		t.Errorf("int8 table does not say TOPS:\n%s", b.String())
	}
}

// The legend's config line is the config file's description, which an
// override can contradict (108 SMs under gpu.sm_count=4): it names the
// overrides with it.
func TestLegendNamesOverrides(t *testing.T) {
	rep := outputReport()
	rep.Provenance = &results.Provenance{ConfigDescription: "NVIDIA A100-SXM4-40GB, 108 SMs",
		Sets: []string{"gpu.sm_count=4"}}
	var b bytes.Buffer
	Table(&b, rep)
	flat := strings.Join(strings.Fields(b.String()), " ")
	if !strings.Contains(flat, "108 SMs; as changed by --set gpu.sm_count=4") {
		t.Errorf("legend does not name the override:\n%s", b.String())
	}
	rep.Provenance.Sets = nil
	b.Reset()
	Table(&b, rep)
	if strings.Contains(b.String(), "as changed") {
		t.Errorf("legend names overrides there are none of:\n%s", b.String())
	}
}

// A run whose fidelity settings differ from the defaults says so, in the
// table's legend and in report.md's provenance.
func TestFidelityChangesAreShown(t *testing.T) {
	rep := outputReport()
	rep.Provenance = &results.Provenance{ConfigDescription: "A100",
		FidelityChanges: []string{"kernel.simulated_candidates=1 (default 3)"}}
	var b bytes.Buffer
	Table(&b, rep)
	flat := strings.Join(strings.Fields(b.String()), " ")
	if !strings.Contains(flat, "fidelity: simulated with settings off the defaults") ||
		!strings.Contains(flat, "kernel.simulated_candidates=1 (default 3)") {
		t.Errorf("table does not name the fidelity change:\n%s", b.String())
	}
	md := string(Markdown(rep, loadDefault(t), nil))
	if !strings.Contains(md, "fidelity off its default**: `kernel.simulated_candidates=1 (default 3)`") {
		t.Errorf("report.md does not name the fidelity change:\n%s", md)
	}
	rep.Provenance.FidelityChanges = nil
	b.Reset()
	Table(&b, rep)
	if strings.Contains(b.String(), "fidelity:") {
		t.Error("fidelity line with no change")
	}
}
