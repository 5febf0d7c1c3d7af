package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate reports its progress on stderr as the GEMM rows simulate, and
// --quiet silences it.
func TestValidatePrintsProgress(t *testing.T) {
	pts := onePointFile(t)
	for _, quiet := range []bool{false, true} {
		args := []string{"validate", "--points", pts}
		if quiet {
			args = append(args, "--quiet")
		}
		_, errOut, code := capture(t, func() int { return dispatch(args) })
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if has := strings.Contains(errOut, "validation GEMMs simulated"); has == quiet {
			t.Errorf("%v: progress shown %v: %q", args, has, errOut)
		}
	}
}

// A config error under validate exits 2 with the error and no progress
// line that claims GEMMs were simulated ("0/0 done").
func TestValidateConfigErrorPrintsNoProgress(t *testing.T) {
	pts := onePointFile(t)
	_, errOut, code := capture(t, func() int {
		return dispatch([]string{"validate", "--points", pts, "--set", "gpu.clock_policy=bogus"})
	})
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, errOut)
	}
	if strings.Contains(errOut, "simulated") || !strings.Contains(errOut, "clock_policy") {
		t.Errorf("stderr %q: want the clock_policy error and no progress line", errOut)
	}
}

// onePointFile writes a points file of one small GEMM row.
func onePointFile(t *testing.T) string {
	t.Helper()
	pts := filepath.Join(t.TempDir(), "p.csv")
	body := "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source\n" +
		"g,A100-SXM4-40GB,fp16,gemm,256,256,256,10,8,us,,test\n"
	if err := os.WriteFile(pts, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return pts
}
