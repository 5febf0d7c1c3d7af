package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
)

func TestRunGEMMJSONHasTheContract(t *testing.T) {
	out, _, code := capture(t, func() int {
		return dispatch([]string{"run", "--gemm", "512x512x1024", "--format", "json", "--quiet"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Tool, Version, Config string
		Results               []map[string]any
		Totals                []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Tool != "stcsim" || doc.Config != "a100-40gb" || doc.Version == "" {
		t.Fatalf("header: %+v", doc)
	}
	if len(doc.Results) != 2 || len(doc.Totals) != 2 {
		t.Fatalf("want a dense and a sparse record, got %d results", len(doc.Results))
	}
	keys := []string{"workload", "layer", "m", "n", "k", "precision", "mode",
		"sparse_applied", "count", "kernel", "cycles", "time_us", "tflops",
		"tc_utilization", "dram_read_bytes", "dram_write_bytes", "dram_gbps",
		"l2_hit_rate", "metadata_bytes", "bound"}
	for _, r := range doc.Results {
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Errorf("%v record lacks %q", r["mode"], k)
			}
		}
	}
	if _, ok := doc.Results[1]["speedup"]; !ok || doc.Results[1]["mode"] != "sparse" {
		t.Errorf("sparse record lacks speedup: %v", doc.Results[1])
	}
}

func TestRunIsDeterministicAndWritesOut(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--gemm", "256x512x512", "--format", "csv", "--quiet"}
	a, _, _ := capture(t, func() int { return dispatch(append(args, "--out", dir)) })
	b, _, _ := capture(t, func() int { return dispatch(args) })
	if a != b || a == "" {
		t.Fatalf("two runs differ or are empty:\n%s\n%s", a, b)
	}
	written, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil || string(written) != a {
		t.Fatalf("results.csv differs from stdout (%v)", err)
	}
	for _, f := range []string{"results.json", "config.yaml", "report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gemm", "0x512x512"}, "0x512x512"},
		{[]string{"--gemm", "-4x512x512"}, "-4x512x512"},
		{[]string{"--gemm", "axbxc"}, "axbxc"},
		{[]string{"--gemm", "512x512"}, "512x512"},
		{[]string{"--gemm", "512x512x514"}, "K=514 is not a whole number of the 4-wide groups"},
		{[]string{"--set", "l2.sise_kb=1"}, "unknown key l2.sise_kb"},
		{[]string{"--set", "gpu.sm_count=0"}, "gpu.sm_count"},
		{[]string{"--set", "gpu.sm_count=many"}, "gpu.sm_count"},
		{[]string{"--set", "noequals"}, "key.path=value"},
		{[]string{"--config", "no-such-gpu"}, "no-such-gpu"},
		{[]string{"--precision", "fp8"}, "fp8"},
		{[]string{"--mode", "half"}, "--mode"},
		{[]string{"--format", "xml"}, "--format"},
		{[]string{"--batch", "0"}, "--batch"},
		{[]string{"--workload", "/no/such/trace.csv"}, "trace.csv"},
		{[]string{"--bogus"}, "bogus"},
	} {
		dir := t.TempDir()
		args := append([]string{"run", "--quiet", "--out", dir}, c.args...)
		out, errOut, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitUsage)
		}
		if !strings.Contains(errOut, c.want) {
			t.Errorf("%v: message %q does not name %q", c.args, errOut, c.want)
		}
		if out != "" {
			t.Errorf("%v: wrote to stdout: %q", c.args, out)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote %d files", c.args, len(entries))
		}
	}
}

func TestConfigShowAndList(t *testing.T) {
	out, code := captureStdout(t, func() int {
		return dispatch([]string{"config", "show", "--config", "a100-80gb", "--set", "l2.ways=8"})
	})
	if code != exitOK || !strings.Contains(out, "ways: 8") ||
		!strings.Contains(out, "bandwidth_gbps: 2039") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, code = captureStdout(t, func() int { return dispatch([]string{"config", "list"}) })
	if code != exitOK || !strings.Contains(out, "h100-sxm") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// The GEMMs of the split-K deadlock report: their k-steps do not divide
// evenly among the splits the heuristic picks.
func TestRunUnevenSplitK(t *testing.T) {
	for _, args := range [][]string{
		{"--gemm", "128x784x1152"},
		{"--gemm", "256x196x1152", "--mode", "dense"},
	} {
		out, errOut, code := capture(t, func() int {
			return dispatch(append([]string{"run", "--quiet", "--format", "csv"}, args...))
		})
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if !strings.Contains(out, "splitk") {
			t.Errorf("%v: no split-K kernel chosen, the test lost its point:\n%s", args, out)
		}
	}
}

// Repeats that would count layers twice or pair a sparse layer with the
// wrong dense one are rejected before anything runs, naming the culprit.
func TestRunRejectsDuplicates(t *testing.T) {
	dir := t.TempDir()
	row := "name,m,n,k,precision,sparsity,count,batch\nl1,256,256,256,fp16,2:4,1,1\n"
	write := func(rel, body string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a/t.csv", row)
	b := write("b/t.csv", row)
	dupRows := write("dup.csv", row+"l1,512,256,256,fp16,2:4,1,1\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gemm", "256x256x256", "--gemm", "256x256x256"}, "--gemm: 256x256x256 given twice"},
		{[]string{"--workload", a, "--workload", a}, a + " given twice"},
		{[]string{"--workload", a, "--workload", b}, `both named "t"`},
		{[]string{"--workload", dupRows}, dupRows + ":3:1: name: layer name \"l1\" is already used by line 2"},
	} {
		out, errOut, code := capture(t, func() int {
			return dispatch(append([]string{"run", "--quiet"}, c.args...))
		})
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit %d naming %q", c.args,
				code, errOut, exitUsage, c.want)
		}
	}
}

// An explicit --batch makes each --gemm a batched kernel of that many
// GEMMs: the record says so and its time grows.
func TestRunBatchAppliesToGEMM(t *testing.T) {
	results := func(args ...string) []map[string]any {
		out, errOut, code := capture(t, func() int {
			return dispatch(append([]string{"run", "--quiet", "--format", "json",
				"--mode", "dense", "--gemm", "256x256x256"}, args...))
		})
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var doc struct{ Results []map[string]any }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Results
	}
	one, eight := results()[0], results("--batch", "8")[0]
	if one["batch"] != 1.0 || eight["batch"] != 8.0 {
		t.Fatalf("batch %v without --batch, %v with --batch 8", one["batch"], eight["batch"])
	}
	if eight["time_us"].(float64) <= one["time_us"].(float64) {
		t.Errorf("8 batched GEMMs (%v us) not slower than one (%v us)",
			eight["time_us"], one["time_us"])
	}
}

// Every output records what produced it: the config files in merge
// order with their hashes, the overrides, the effective config's hash
// (that of config.yaml's values), the workloads with their options and
// hashes, the version and the command line.
func TestRunRecordsProvenance(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	body := "name,m,n,k,precision,sparsity,count,batch\nl1,256,256,256,fp16,2:4,1,1\n"
	if err := os.WriteFile(trace, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"run", "--quiet", "--format", "json", "--config", "a100-80gb",
		"--set", "l2.size_kb=20480", "--workload", trace, "--out", out}
	stdout, errOut, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct{ Provenance sim.Provenance }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Provenance
	if strings.Join(p.Command, " ") != strings.Join(append([]string{"stcsim"}, args...), " ") {
		t.Errorf("command %q", p.Command)
	}
	if len(p.ConfigFiles) != 2 || p.ConfigFiles[0].Source != "a100-40gb.yaml (built-in)" ||
		p.ConfigFiles[1].Source != "a100-80gb.yaml (built-in)" {
		t.Errorf("config files %+v: want the base a100-40gb, then a100-80gb", p.ConfigFiles)
	}
	builtin, _ := configs.BuiltinSource("a100-80gb")
	if p.ConfigFiles[1].SHA256 != sha(builtin) {
		t.Errorf("a100-80gb hash %s, want %s", p.ConfigFiles[1].SHA256, sha(builtin))
	}
	if len(p.Sets) != 1 || p.Sets[0] != "l2.size_kb=20480" || p.Version != sim.Version {
		t.Errorf("sets %q, version %q", p.Sets, p.Version)
	}
	yml, err := os.ReadFile(filepath.Join(out, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, l := range strings.SplitAfter(string(yml), "\n") {
		if !strings.HasPrefix(l, "#") {
			values = append(values, l)
		}
	}
	if p.ConfigHash != sha([]byte(strings.Join(values, ""))) {
		t.Errorf("config hash %s is not the hash of config.yaml's values", p.ConfigHash)
	}
	if len(p.Workloads) != 1 || p.Workloads[0].Source != trace || p.Workloads[0].SHA256 != sha([]byte(body)) {
		t.Errorf("workloads %+v", p.Workloads)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## Provenance", "--set l2.size_kb=20480", p.ConfigHash, sha([]byte(body))} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	saved, _ := os.ReadFile(filepath.Join(out, "results.json"))
	if !strings.Contains(string(saved), p.ConfigHash) {
		t.Error("results.json lacks the provenance")
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// --layer keeps the layers whose names match, drops workloads left
// empty, and rejects a bad pattern or one that matches nothing.
func TestRunLayerFilter(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	body := "name,m,n,k,precision,sparsity,count,batch\n" +
		"enc.ffn1,256,256,256,fp16,2:4,2,1\nenc.attn,256,128,256,fp16,2:4,1,1\nenc.ffn2,256,256,512,fp16,2:4,2,1\n"
	if err := os.WriteFile(trace, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := capture(t, func() int {
		return dispatch([]string{"run", "--quiet", "--format", "json", "--workload", trace,
			"--gemm", "512x512x512", "--layer", `ffn\d`})
	})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Results []sim.LayerResult
		Totals  []sim.Total
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var layers []string
	sum := 0.0
	for _, r := range doc.Results {
		layers = append(layers, r.Layer)
		if r.Mode == tensorcore.Dense {
			sum += r.TimeUS * float64(r.Count)
		}
	}
	if strings.Join(layers, ",") != "enc.ffn1,enc.ffn1,enc.ffn2,enc.ffn2" {
		t.Errorf("layers %v, want the two ffn layers in both modes", layers)
	}
	if len(doc.Totals) != 2 || math.Abs(doc.Totals[0].TimeUS-sum) > 1e-9 {
		t.Errorf("totals %+v: want the selected layers' sum %g", doc.Totals, sum)
	}
	for _, c := range []struct{ pattern, want string }{
		{"(", "--layer \"(\": error parsing regexp"},
		{"nothing", "--layer \"nothing\" matches no layer (layers: enc.ffn1, enc.attn"},
	} {
		_, errOut, code := capture(t, func() int {
			return dispatch([]string{"run", "--quiet", "--workload", trace, "--layer", c.pattern})
		})
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("--layer %q: exit %d, %q", c.pattern, code, errOut)
		}
	}
}
