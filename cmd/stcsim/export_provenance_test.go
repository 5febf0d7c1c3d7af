package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// These tests cover the provenance of trace export and prune, the
// export's refusal of flags nothing reads, and prune's refusal of
// degenerate tensors.

// csvProvenance reads the "# provenance: {...}" line of an exported CSV.
func csvProvenance(t *testing.T, out string) workloads.TraceProvenance {
	t.Helper()
	lines := strings.SplitN(out, "\n", 3)
	var p workloads.TraceProvenance
	rest, ok := strings.CutPrefix(lines[1], "# provenance: ")
	if !ok || json.Unmarshal([]byte(rest), &p) != nil {
		t.Fatalf("no provenance comment line: %q", lines[:2])
	}
	return p
}

func TestTraceExportRecordsProvenance(t *testing.T) {
	dir := t.TempDir()
	args := []string{"trace", "export", "--workload", "resnet50", "--batch", "4",
		"--resolution", "160"}
	out, code := captureStdout(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("export: exit %d", code)
	}
	p := csvProvenance(t, out)
	if p.Version != sim.Version || strings.Join(p.Command, " ") != "stcsim "+strings.Join(args, " ") ||
		p.Source != "model" || p.Name != "resnet50" || p.Batch != 4 || p.Resolution != 160 ||
		p.Seq != 0 || p.Precision != "fp16" || p.SHA256 != "" {
		t.Errorf("resnet50 provenance: %+v", p)
	}
	again, _ := captureStdout(t, func() int { return dispatch(args) })
	if again != out {
		t.Error("two identical exports differ")
	}

	// bert: seq, precision, per-layer; json.
	out, code = captureStdout(t, func() int {
		return dispatch([]string{"trace", "export", "--workload", "bert-base", "--seq", "64",
			"--precision", "bf16", "--per-layer", "--format", "json"})
	})
	var js struct {
		Provenance workloads.TraceProvenance `json:"provenance"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &js) != nil {
		t.Fatalf("bert json export: exit %d", code)
	}
	if p := js.Provenance; p.Seq != 64 || p.Resolution != 0 || p.Batch != workloads.DefaultBatch ||
		p.Precision != "bf16" || !p.PerLayer || p.Source != "model" {
		t.Errorf("bert provenance: %+v", p)
	}

	// A file: its path as given and the SHA-256 of its bytes; the export
	// reads back in trace check, run, and export again.
	r50 := filepath.Join(dir, "r50.csv")
	out, _ = captureStdout(t, func() int {
		return dispatch([]string{"trace", "export", "--workload", "resnet18", "--batch", "1"})
	})
	os.WriteFile(r50, []byte(out), 0o644)
	for _, format := range []string{"csv", "json"} {
		out, code = captureStdout(t, func() int {
			return dispatch([]string{"trace", "export", "--workload", r50, "--precision", "int8",
				"--format", format})
		})
		if code != exitOK {
			t.Fatalf("file export %s: exit %d", format, code)
		}
		var p workloads.TraceProvenance
		if format == "csv" {
			p = csvProvenance(t, out)
		} else {
			js.Provenance = workloads.TraceProvenance{}
			json.Unmarshal([]byte(out), &js)
			p = js.Provenance
		}
		b, _ := os.ReadFile(r50)
		if p.Source != r50 || p.SHA256 != sha(b) || p.Precision != "int8" || p.Batch != 0 ||
			p.Resolution != 0 || p.Name != "r50.csv" && p.Name != "r50" {
			t.Errorf("file provenance %s: %+v", format, p)
		}
		conv := filepath.Join(dir, "conv."+format)
		os.WriteFile(conv, []byte(out), 0o644)
		if msg, code := captureStdout(t, func() int {
			return dispatch([]string{"trace", "check", conv})
		}); code != exitOK || !strings.Contains(msg, "ok: ") {
			t.Errorf("trace check of the %s export: exit %d %q", format, code, msg)
		}
		if _, code := captureStdout(t, func() int {
			return dispatch([]string{"trace", "export", "--workload", conv})
		}); code != exitOK {
			t.Errorf("re-export of the %s export: exit %d", format, code)
		}
		if _, _, code := capture(t, func() int {
			return dispatch([]string{"run", "--workload", conv, "--layer", "^fc$", "--mode", "dense",
				"--quiet", "--format", "json"})
		}); code != exitOK {
			t.Errorf("run --workload of the %s export: exit %d", format, code)
		}
	}
}

func TestTraceExportRefusesFlagsNothingReads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.csv")
	os.WriteFile(file, []byte("name,m,n,k,precision,sparsity,count,batch\nl,64,64,64,fp16,2:4,1,1\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", file, "--batch", "4"}, "--batch 4: no workload of this export reads it"},
		{[]string{"--workload", file, "--seq", "64"}, "--seq 64: no workload of this export reads it"},
		{[]string{"--workload", file, "--resolution", "160"}, "--resolution 160: no workload of this export reads it"},
		{[]string{"--workload", file, "--per-layer"}, "--per-layer: no workload of this export reads it"},
		{[]string{"--workload", "bert-base", "--resolution", "160"}, "--resolution 160: no workload"},
		{[]string{"--workload", "resnet50", "--seq", "64"}, "--seq 64: no workload"},
		// the default value given explicitly is still refused
		{[]string{"--workload", "resnet18", "--seq", "128"}, "--seq 128: no workload"},
	} {
		stdout, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"trace", "export"}, c.args...))
		})
		if code != exitUsage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2 and %q", c.args, code,
				len(stdout), stderr, c.want)
		}
	}
	for _, args := range [][]string{
		{"--workload", "resnet50", "--batch", "2", "--resolution", "160", "--per-layer"},
		{"--workload", "bert-large", "--batch", "2", "--seq", "64"},
		{"--workload", file, "--precision", "bf16"},
	} {
		if _, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"trace", "export"}, args...))
		}); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

func TestPruneRecordsProvenance(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := tensorfile.WriteSafetensors(&b, []workloads.Tensor{
		{Name: "a", Shape: []int{1}, Data: []float32{1}},
		{Name: "layer.weight", Shape: []int{16, 32}, Data: workloads.SyntheticWeights(16, 32, 2).Data}}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "m.safetensors")
	os.WriteFile(in, b.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	args := []string{"prune", "--in", in + "#layer.weight", "--out", out, "--pattern", "2:8"}
	text, code := captureStdout(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("prune: exit %d", code)
	}
	// The summary names the tensor once, as --in did (not "#b#b").
	if !strings.HasPrefix(text, in+"#layer.weight: ") {
		t.Errorf("summary starts %q", strings.SplitN(text, "\n", 2)[0])
	}
	first, _ := os.ReadFile(filepath.Join(out, workloads.SummaryFile))
	var s workloads.PruneSummary
	if err := json.Unmarshal(first, &s); err != nil || s.Provenance == nil {
		t.Fatalf("summary.json: %v %s", err, first)
	}
	p := s.Provenance
	if p.Version != sim.Version || strings.Join(p.Command, " ") != "stcsim "+strings.Join(args, " ") ||
		p.Input != in+"#layer.weight" || p.SHA256 != sha(b.Bytes()) || p.Tensor != "layer.weight" ||
		p.Pattern != "2:8" || p.Verify {
		t.Errorf("provenance: %+v", p)
	}
	// The existing fields are kept.
	if s.Source != in+"#layer.weight" || s.Tensor != "layer.weight" || s.Pattern != "2:8" ||
		s.GEMMShape != [2]int{16, 32} || len(s.Files) != 4 {
		t.Errorf("summary: %s", first)
	}
	// Deterministic: the same command writes the same bytes.
	if _, code := captureStdout(t, func() int { return dispatch(args) }); code != exitOK {
		t.Fatal("second prune failed")
	}
	if again, _ := os.ReadFile(filepath.Join(out, workloads.SummaryFile)); !bytes.Equal(again, first) {
		t.Error("two identical prunes wrote different summaries")
	}
	// --verify records it.
	js, code := captureStdout(t, func() int {
		return dispatch([]string{"prune", "--in", filepath.Join(out, workloads.PrunedFile),
			"--pattern", "2:8", "--verify", "--format", "json"})
	})
	s = workloads.PruneSummary{}
	if code != exitOK || json.Unmarshal([]byte(js), &s) != nil || s.Provenance == nil ||
		!s.Provenance.Verify || s.Provenance.Tensor != "" {
		t.Errorf("--verify: exit %d %s", code, js)
	}
}

func TestPruneRefusesEmptyTensors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		shape []int
		want  string
	}{
		{[]int{0, 32}, "shape [0 32] has a zero dimension"},
		{[]int{32, 0}, "shape [32 0] has a zero dimension"},
		{[]int{4, 0, 3, 3}, "shape [4 0 3 3] has a zero dimension"},
		{[]int{32}, "weight of shape [32]"},
		{[]int{4, 6}, "K = 6 is not a multiple of 4"},
	} {
		n := 1
		for _, d := range c.shape {
			n *= d
		}
		var b bytes.Buffer
		if err := tensorfile.WriteNPY(&b, c.shape, make([]float32, n)); err != nil {
			t.Fatal(err)
		}
		in := filepath.Join(dir, "w.npy")
		os.WriteFile(in, b.Bytes(), 0o644)
		out := filepath.Join(dir, "out")
		stdout, stderr, code := capture(t, func() int {
			return dispatch([]string{"prune", "--in", in, "--out", out})
		})
		if code != exitUsage || !strings.Contains(stderr, in) || !strings.Contains(stderr, c.want) ||
			stdout != "" {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %s and %q", c.shape, code, stderr, in, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s was created", c.shape, out)
		}
	}
}
