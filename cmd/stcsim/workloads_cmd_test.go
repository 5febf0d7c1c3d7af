package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// These tests cover trace_cmd.go and prune_cmd.go.

func TestTraceExport(t *testing.T) {
	for _, model := range workloads.Models() {
		for _, format := range []string{"csv", "json"} {
			args := []string{"trace", "export", "--workload", model,
				"--batch", "4", "--format", format}
			if strings.HasPrefix(model, "bert") || workloads.IsLLM(model) {
				args = append(args, "--seq", "64")
			}
			out, code := captureStdout(t, func() int { return dispatch(args) })
			if code != exitOK {
				t.Fatalf("export %s %s: exit %d", model, format, code)
			}
			parse := workloads.ParseCSV
			if format == "json" {
				parse = workloads.ParseJSON
			}
			got, err := parse(strings.NewReader(out), model)
			if err != nil {
				t.Fatalf("export %s %s does not parse: %v", model, format, err)
			}
			want, _ := workloads.Build(model, workloads.Options{Batch: 4, Seq: 64})
			if got.MACs() != want.MACs() || len(got.GEMMs) != len(want.GEMMs) {
				t.Errorf("export %s %s: %d rows %d MACs, want %d rows %d MACs", model,
					format, len(got.GEMMs), got.MACs(), len(want.GEMMs), want.MACs())
			}
		}
	}
}

func TestTraceUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"trace"},
		{"trace", "frobnicate"},
		{"trace", "export"},
		{"trace", "export", "--workload", "resnet51"},
		{"trace", "export", "--workload", "resnet50", "--batch", "0"},
		{"trace", "export", "--workload", "resnet50", "--format", "xml"},
		{"trace", "export", "--workload", "resnet50", "--precision", "fp64"},
		{"trace", "check"},
		{"trace", "check", "/nonexistent/t.csv"},
		{"prune"},
		{"prune", "--in", "w.npy"},
		{"prune", "--in", "w.npy", "--out", "d", "--pattern", "4:2"},
		{"prune", "--in", "/nonexistent/w.npy", "--verify"},
	} {
		_, code := captureStdout(t, func() int { return dispatch(args) })
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestPruneCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "w.npy")
	var b bytes.Buffer
	if err := tensorfile.WriteNPY(&b, []int{32, 64}, workloads.SyntheticWeights(32, 64, 5).Data); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, b.Bytes(), 0o644)
	out := filepath.Join(dir, "out")

	if _, code := captureStdout(t, func() int {
		return dispatch([]string{"prune", "--in", in, "--verify"})
	}); code != exitInternal {
		t.Errorf("--verify of a dense tensor: exit %d, want %d", code, exitInternal)
	}
	js, code := captureStdout(t, func() int {
		return dispatch([]string{"prune", "--in", in, "--out", out, "--format", "json"})
	})
	var s workloads.PruneSummary
	if code != exitOK || json.Unmarshal([]byte(js), &s) != nil || !s.ValidMask ||
		s.Sparsity != 0.5 || s.GEMMShape != [2]int{32, 64} {
		t.Fatalf("prune: exit %d, summary %s", code, js)
	}
	// The output verifies, and a trace row can use it.
	if _, code := captureStdout(t, func() int {
		return dispatch([]string{"prune", "--in", filepath.Join(out, workloads.PrunedFile), "--verify"})
	}); code != exitOK {
		t.Errorf("--verify of the pruned tensor: exit %d", code)
	}
	trace := filepath.Join(dir, "t.csv")
	os.WriteFile(trace, []byte("name,m,n,k,precision,sparsity,count,batch,weights\n"+
		"l,32,128,64,fp16,2:4,1,1,out\n"), 0o644)
	if msg, code := captureStdout(t, func() int {
		return dispatch([]string{"trace", "check", trace})
	}); code != exitOK || !strings.Contains(msg, "ok: 1 rows") {
		t.Errorf("trace check: exit %d, %q", code, msg)
	}
	os.WriteFile(trace, []byte("name,m,n,k,precision,sparsity,count,batch,weights\n"+
		"l,64,128,64,fp16,2:4,1,1,out\n"), 0o644)
	if _, code := captureStdout(t, func() int {
		return dispatch([]string{"trace", "check", trace})
	}); code != exitUsage {
		t.Errorf("trace check with a shape mismatch: exit %d, want %d", code, exitUsage)
	}
}

// TestPrunePatterns: stcsim prune takes any N:M; the summary's metadata
// bytes are kept values x ceil(log2 M) bits / 8 (4 bits for 1:2).
func TestPrunePatterns(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "w.npy")
	var b bytes.Buffer
	if err := tensorfile.WriteNPY(&b, []int{32, 64}, workloads.SyntheticWeights(32, 64, 5).Data); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, b.Bytes(), 0o644)
	for pat, bits := range map[string]int{"1:2": 4, "2:4": 2, "1:4": 2, "2:8": 3, "4:8": 3} {
		js, code := captureStdout(t, func() int {
			return dispatch([]string{"prune", "--in", in, "--out", filepath.Join(dir, pat[:1]+pat[2:]),
				"--pattern", pat, "--format", "json"})
		})
		var s workloads.PruneSummary
		if code != exitOK || json.Unmarshal([]byte(js), &s) != nil || !s.ValidMask {
			t.Fatalf("%s: exit %d, %s", pat, code, js)
		}
		var n, m int
		fmt.Sscanf(pat, "%d:%d", &n, &m)
		kept := 32 * 64 * n / m
		if s.MetadataBytes != kept*bits/8 || s.Pattern != pat {
			t.Errorf("%s: %d metadata bytes, want %d x %d / 8", pat, s.MetadataBytes, kept, bits)
		}
	}
}
