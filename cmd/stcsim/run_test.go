package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
