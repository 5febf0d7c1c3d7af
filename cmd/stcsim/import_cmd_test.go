package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/workloads"
)

// These tests cover `stcsim trace import` and --workload FILE.onnx /
// PROFILE.json (trace_cmd.go, run.go).

// byomBlock is the command block of docs/workloads.md's "Bring your own
// model" section.
func byomBlock(t *testing.T) docBlock {
	t.Helper()
	for _, b := range docBlocks(t) {
		if b.file == filepath.Join("docs", "workloads.md") && b.info == "sh" &&
			strings.Contains(strings.Join(b.body, "\n"), "stcsim trace import") {
			return b
		}
	}
	t.Fatal("docs/workloads.md has no sh block with stcsim trace import")
	return docBlock{}
}

// inScratch runs the test in a scratch directory where workloads/ is the
// repository's (so the documented fixture paths resolve).
func inScratch(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(repoRoot, "workloads"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(abs, filepath.Join(dir, "workloads")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// TestBringYourOwnModelDocRuns runs every command of the docs' block, as
// written (a "> FILE" redirection writes stdout there), and checks what
// the page says of its output.
func TestBringYourOwnModelDocRuns(t *testing.T) {
	b := byomBlock(t)
	inScratch(t)
	for _, line := range b.body {
		cmd, redirect, _ := strings.Cut(line, " > ")
		words := shellWords(cmd)
		if len(words) == 0 || words[0] != "stcsim" {
			continue
		}
		out, se, code := capture(t, func() int { return dispatch(words[1:]) })
		if code != exitOK {
			t.Fatalf("%s: %s: exit %d: %s", b.where(), line, code, se)
		}
		if redirect != "" {
			if err := os.WriteFile(strings.TrimSpace(redirect), []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r50, err := workloads.Load("r50.csv")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := workloads.Build("resnet50", workloads.Options{Batch: 32})
	if len(r50.GEMMs) != 21 || r50.MACs() != want.MACs() {
		t.Errorf("r50.csv: %d rows, %d MACs; want 21 rows, %d MACs", len(r50.GEMMs), r50.MACs(), want.MACs())
	}
	for _, f := range []string{"enc.csv", "prof.json"} {
		tr, err := workloads.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.GEMMs) != 6 {
			t.Errorf("%s: %d rows, want bert-base's 6 encoder rows", f, len(tr.GEMMs))
		}
	}
	tiny, err := workloads.Load("tiny.csv")
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, g := range tiny.GEMMs {
		if g.Weights != "" {
			named = append(named, g.Name)
		}
	}
	if strings.Join(named, ",") != "conv,fc1" {
		t.Errorf("tiny.csv: rows with weights %v, want conv and fc1", named)
	}
}

// TestRunImportedModelRecordsTheImport: run --workload FILE.onnx --mode
// both simulates every row in both modes, with the graph's 2:4 weights,
// and records the import in the provenance.
func TestRunImportedModelRecordsTheImport(t *testing.T) {
	inScratch(t)
	out, se, code := capture(t, func() int {
		return dispatch([]string{"run", "--workload", "workloads/testdata/tiny.onnx", "--batch", "4",
			"--mode", "both", "--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, se)
	}
	var rep struct {
		Provenance struct {
			Workloads []workloads.Origin `json:"workloads"`
		} `json:"provenance"`
		Records []struct {
			Layer string `json:"layer"`
			Mode  string `json:"mode"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	ws := rep.Provenance.Workloads
	if len(ws) != 1 || ws[0].Import == nil || ws[0].Import.Format != "onnx" || ws[0].SHA256 == "" ||
		ws[0].Batch != 4 || len(ws[0].Import.Inputs) != 1 || ws[0].Import.Inputs[0] != "input=4x16x4x4" {
		t.Errorf("provenance workloads %+v", ws)
	}
	// tiny's conv and fc1 weights are 2:4: their rows read them from the
	// graph itself, and the provenance hashes them.
	var named []string
	for _, w := range ws[0].Weights {
		named = append(named, w.Path)
	}
	if want := "workloads/testdata/tiny.onnx#conv,workloads/testdata/tiny.onnx#fc1"; len(ws) == 1 &&
		strings.Join(named, ",") != want {
		t.Errorf("weights %v, want %s", named, want)
	}
	modes := map[string]int{}
	for _, r := range rep.Records {
		modes[r.Mode]++
	}
	if modes["dense"] != 3 || modes["sparse"] != 3 {
		t.Errorf("records per mode %v, want 3 layers in each", modes)
	}
}

// TestImportBadInput: exit 2, a message naming the file, nothing on
// stdout and no weights directory.
func TestImportBadInput(t *testing.T) {
	dir := inScratch(t)
	write := func(name, content string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	r50, err := os.ReadFile("workloads/testdata/resnet50.onnx")
	if err != nil {
		t.Fatal(err)
	}
	truncated := write("trunc.onnx", string(r50[:len(r50)/2]))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", "import", write("notonnx.onnx", "hello\n"), "--weights-out", "w"}, "notonnx.onnx: not an ONNX model"},
		{[]string{"trace", "import", truncated, "--batch", "1", "--weights-out", "w"}, "trunc.onnx: not an ONNX model"},
		{[]string{"trace", "import", write("p.json", `{"name":"x","gemms":[]}`)}, "not a model file"},
		{[]string{"trace", "import", write("bad.json", `{"traceEvents":[{"name":"aten::mm","ph":"X","ts":0,"dur":1,"args":{}}]}`)}, "record_shapes=True"},
		{[]string{"trace", "import", "workloads/testdata/encoder.onnx", "--batch", "32", "--weights-out", "w"}, "stay unknown"},
		{[]string{"trace", "import", "workloads/testdata/tiny.onnx", "--input", "input=4x16"}, "2 dims given"},
		{[]string{"trace", "import", "workloads/testdata/tiny.onnx", "--input", "input=4xZ"}, "not a whole number"},
		{[]string{"trace", "import", "workloads/testdata/tiny.onnx", "--input", "input=4x16x4x4", "--format", "xml"}, "--format"},
		{[]string{"trace", "import", "workloads/testdata/tiny-profile.json", "--batch", "4"}, "records the shapes it ran"},
		{[]string{"trace", "import", "workloads/testdata/tiny.onnx", "--batch", "4", "--weights-out", ""}, "empty path"},
		{[]string{"trace", "import"}, "want one model file"},
		{[]string{"run", "--workload", truncated, "--mode", "both"}, "trunc.onnx: not an ONNX model"},
		{[]string{"run", "--workload", "workloads/testdata/encoder.onnx"}, "stay unknown"},
	} {
		out, se, code := capture(t, func() int { return dispatch(c.args) })
		if code != exitUsage || out != "" || !strings.Contains(se, c.want) {
			t.Errorf("%v: exit %d, stdout %.80q, stderr %q; want exit 2, nothing, and %q", c.args, code, out, se, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "w")); err == nil {
			t.Errorf("%v: wrote the weights directory", c.args)
		}
	}
}

// TestDualSideReadsImportedMasks: the weights an import attaches are
// A's masks in the dual-side mode.
func TestDualSideReadsImportedMasks(t *testing.T) {
	inScratch(t)
	out, se, code := capture(t, func() int {
		return dispatch([]string{"trace", "import", "workloads/testdata/tiny.onnx", "--batch", "4",
			"--weights-out", "w"})
	})
	if code != exitOK {
		t.Fatalf("import: exit %d: %s", code, se)
	}
	if err := os.WriteFile("tiny.csv", []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	out, se, code = capture(t, func() int {
		return dispatch([]string{"run", "--workload", "tiny.csv", "--mode", "sparse", "--layer", "conv",
			"--set", "tensorcore.dual_side=true", "--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, se)
	}
	var rep struct {
		Results []struct {
			Masks string `json:"masks"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || !strings.HasPrefix(rep.Results[0].Masks, "A from weights w/conv.npy") {
		t.Errorf("results %+v", rep.Results)
	}
}

// TestRunTakesTheImportersInput: run accepts the importer's --input (the
// graph's dims without --batch), records the batch the graph ran at, not
// the default 32, prints the importer's notes, and refuses --input where
// no ONNX graph reads it.
func TestRunTakesTheImportersInput(t *testing.T) {
	inScratch(t)
	out, se, code := capture(t, func() int {
		return dispatch([]string{"run", "--workload", "workloads/testdata/tiny.onnx", "--input", "input=8x16x4x4",
			"--set", "sim.fidelity=fast", "--format", "json", "--quiet"})
	})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, se)
	}
	var rep struct {
		Provenance struct {
			Workloads []workloads.Origin `json:"workloads"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	if ws := rep.Provenance.Workloads; len(ws) != 1 || ws[0].Batch != 8 || ws[0].Import == nil ||
		strings.Join(ws[0].Import.Inputs, ",") != "input=8x16x4x4" {
		t.Errorf("provenance workloads %+v, want batch 8 and input=8x16x4x4", ws)
	}
	_, se, code = capture(t, func() int {
		return dispatch([]string{"run", "--workload", "workloads/testdata/resnet50.onnx",
			"--set", "sim.fidelity=fast", "--format", "json", "--quiet"})
	})
	if code != exitOK || !strings.Contains(se, "note: workloads/testdata/resnet50.onnx: weights: "+
		"the file carries no weight data") || !strings.Contains(se, "generated pattern") {
		t.Errorf("exit %d; stderr lacks the importer's note: %q", code, se)
	}
	_, se, code = capture(t, func() int {
		return dispatch([]string{"run", "--workload", "resnet50", "--input", "input=8x3x224x224"})
	})
	if code != exitUsage || !strings.Contains(se, "--input input=8x3x224x224: no workload of this run reads it") {
		t.Errorf("--input on a built-in model: exit %d, %q", code, se)
	}
}
