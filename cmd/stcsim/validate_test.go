package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/validation"
)

// validate prints per-row signs, roles and pinned kernels and per-kind
// bias and rank correlation, and --max-mape turns it into a gate.
func TestValidateTableAndGate(t *testing.T) {
	dir := t.TempDir()
	pts := filepath.Join(dir, "p.csv")
	text := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock\n" +
		"peak-fp16,A100-SXM4-40GB,fp16,peak,,,,311.2,,TFLOPS,,t,,\n" +
		"g1,A100,fp16,gemm,256,512,512,9,7,us,,t,dense=128x128x32_64x64_s5,locked:1410\n" +
		"g2,A100,fp16,gemm,512,512,512,12,9,us,,t,,boost\n" +
		"g3,A100,fp16,gemm,256,1024,512,14,10,us,,t,,\n"
	if err := os.WriteFile(pts, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cache of the test's own: the gate's run below reuses the table's
	// simulations.
	cache := filepath.Join(dir, "cache")
	out, code := captureStdout(t, func() int { return runValidate([]string{"--points", pts, "--cache", cache}) })
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"bias", "rank corr", "over/under", "own choice (error)",
		"peak (check)", "128x128x32_64x64_s5", "locked 1410 MHz", "boost under 400 W",
		"clock not stated", "at boost", "held out", "check"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	_, code = captureStdout(t, func() int {
		return runValidate([]string{"--points", pts, "--cache", cache, "--max-mape", "0.001"})
	})
	if code != exitInternal {
		t.Errorf("--max-mape 0.001: exit %d, want %d", code, exitInternal)
	}
}

// TestMarginCellKeepsSmallMargins: a margin of a few cycles in a hundred
// thousand (a near tie, often against a pruned runner-up's bound) is
// printed with its digits, not as ">0.0%".
func TestMarginCellKeepsSmallMargins(t *testing.T) {
	for _, c := range []struct {
		margin float64
		bound  bool
		want   string
	}{
		{0, false, ""},
		{0.069, false, "6.9%"},
		{0.069, true, ">6.9%"},
		{0.001, false, "0.1%"},
		{0.0000373, true, ">0.0037%"},
		{0.00049, false, "0.049%"},
	} {
		if got := validation.MarginCell(validation.Row{Margin: c.margin, MarginIsBound: c.bound}); got != c.want {
			t.Errorf("margin %g (bound %v): %q, want %q", c.margin, c.bound, got, c.want)
		}
	}
}

// validate's JSON says what produced it: version, command, the points
// file and its hash, and every config a row ran on with its hash (a
// locked-clock row runs on a config of its own).
func TestValidateJSONHasProvenance(t *testing.T) {
	dir := t.TempDir()
	pts := filepath.Join(dir, "p.csv")
	text := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock\n" +
		"peak-fp16,A100-SXM4-40GB,fp16,peak,,,,311.2,,TFLOPS,,t,,\n" +
		"peak-int8,A100-SXM4-40GB,int8,peak,,,,620.1,,TOPS,,t,,locked:1410\n"
	if err := os.WriteFile(pts, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := capture(t, func() int {
		return runValidate([]string{"--points", pts, "--format", "json", "--set", "gpu.sm_count=100"})
	})
	// None of the default calibration rows is in this file: it says so.
	if !strings.Contains(stderr, "no row of "+pts+" is a calibration row") {
		t.Errorf("stderr %q: want the note that every row is held out", stderr)
	}
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var rep validation.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	p := rep.Provenance
	if p == nil || p.Version == "" || p.Points != pts || len(p.PointsSHA256) != 64 ||
		len(p.Command) == 0 || len(p.Sets) != 1 || p.Sets[0] != "gpu.sm_count=100" {
		t.Fatalf("provenance %+v", p)
	}
	if len(p.Configs) != 2 {
		t.Fatalf("configs %+v: want the plain one and the locked-clock one", p.Configs)
	}
	for _, c := range p.Configs {
		if len(c.Hash) != 64 || len(c.Sources) == 0 {
			t.Errorf("config %+v: want sources and a hash", c)
		}
	}
	for _, r := range rep.Rows {
		found := false
		for _, c := range p.Configs {
			found = found || c.Name == r.Config && c.Hash == r.ConfigHash
		}
		if !found {
			t.Errorf("row %s ran on %q, which the provenance does not list", r.ID, r.Config)
		}
	}
}

// A subset's report restates the stored full table of its points file,
// and says so when the table was made from another version of the file.
// The held-out row is a 256^3 GEMM, not a latency (the microbenchmarks
// of a latency row cost 2.5 s a run and the test runs it four times).
func TestValidateSubsetRestatesFullTable(t *testing.T) {
	dir := t.TempDir()
	pts := filepath.Join(dir, "p.csv")
	text := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock\n" +
		"peak-fp16,A100-SXM4-40GB,fp16,peak,,,,311.2,,TFLOPS,,t,,\n" +
		"gemm-256,A100-SXM4-40GB,fp16,gemm,256,256,256,10,,us,,t,,boost\n"
	os.WriteFile(pts, []byte(text), 0o644)
	if code := runValidate([]string{"--points", pts, "--rows", "gemm", "--save-summary",
		filepath.Join(dir, "x.json"), "--summary-label", "l", "--quiet"}); code != exitUsage {
		t.Errorf("--save-summary of a subset: exit %d, want %d", code, exitUsage)
	}
	out, code := captureStdout(t, func() int { return runValidate([]string{"--points", pts, "--rows", "gemm", "--quiet"}) })
	if code != exitOK || !strings.Contains(out, "no stored full table") {
		t.Errorf("no stored table: exit %d\n%s", code, out)
	}
	_, code = captureStdout(t, func() int {
		return runValidate([]string{"--points", pts, "--quiet", "--calibrated", "peak-fp16",
			"--save-summary", validation.FullTablePath(pts), "--summary-label", "commit abc, 2026-12-03"})
	})
	if code != exitOK {
		t.Fatalf("full run: exit %d", code)
	}
	out, _ = captureStdout(t, func() int { return runValidate([]string{"--points", pts, "--rows", "gemm", "--quiet"}) })
	full := out[max(0, strings.Index(out, "every row of")):]
	if !strings.Contains(full, "every row of "+pts+", commit abc, 2026-12-03") || !strings.Contains(full, "gemm_dense_time") {
		t.Errorf("the subset does not restate the full table:\n%s", out)
	}
	os.WriteFile(pts, []byte(text+"gemm-128,A100-SXM4-40GB,fp16,gemm,128,128,128,5,,us,,t,,boost\n"), 0o644)
	out, _ = captureStdout(t, func() int { return runValidate([]string{"--points", pts, "--rows", "gemm", "--quiet"}) })
	if !strings.Contains(out, "another version of the points file") {
		t.Errorf("a stale table is not marked:\n%s", out)
	}
}
