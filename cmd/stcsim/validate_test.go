package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	out, code := captureStdout(t, func() int { return runValidate([]string{"--points", pts}) })
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"bias", "rank corr", "over/under", "pinned (error)",
		"peak (check)", "128x128x32_64x64_s5 (", "locked:1410", "held out", "check"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	_, code = captureStdout(t, func() int {
		return runValidate([]string{"--points", pts, "--max-mape", "0.001"})
	})
	if code != exitInternal {
		t.Errorf("--max-mape 0.001: exit %d, want %d", code, exitInternal)
	}
}
