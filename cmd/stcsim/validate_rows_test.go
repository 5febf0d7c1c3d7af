package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/validation"
)

// validate --rows and --kind select rows of the points file; a pattern
// or kind that selects nothing, or is not one, is a usage error.
func TestValidateSelectsRows(t *testing.T) {
	pts, err := validation.LoadPoints(filepath.Join("..", "..", "validation", "points", "a100-public.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := validation.Select(pts, "^gemm-", []string{"gemm"})
	if err != nil || len(got) == 0 {
		t.Fatalf("^gemm- gemm rows: %d, %v", len(got), err)
	}
	for _, p := range got {
		if !strings.HasPrefix(p.ID, "gemm-") || p.Kind != "gemm" {
			t.Errorf("selected %s (%s)", p.ID, p.Kind)
		}
	}
	peaks, _ := validation.Select(pts, "", []string{"peak"})
	for _, p := range peaks {
		if p.Kind != "peak" {
			t.Errorf("--kind peak selected %s (%s)", p.ID, p.Kind)
		}
	}
	if all, _ := validation.Select(pts, "", nil); len(all) != len(pts) {
		t.Errorf("no filter kept %d of %d", len(all), len(pts))
	}
	points := filepath.Join("..", "..", "validation", "points", "a100-public.csv")
	for _, args := range [][]string{
		{"validate", "--points", points, "--rows", "("},
		{"validate", "--points", points, "--rows", "no-such-row"},
		{"validate", "--points", points, "--kind", "flops"},
	} {
		if _, errOut, code := capture(t, func() int { return dispatch(args) }); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// validate applies --max-work to each GEMM row and to their sum before
// anything runs (a 100000^3 row once ran for 12 minutes with no bound
// but the default's). The two rows' estimates are 2.4e6 and 3.3e6 warp
// k-steps (`stcsim run --gemm 4096x4096x4096 --max-work 1` says so).
func TestValidateMaxWork(t *testing.T) {
	dir := t.TempDir()
	small := writeFile(t, dir, "small.csv", "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock\n"+
		"a,A100-SXM4-40GB,fp16,gemm,4096,4096,4096,1,,ms,,test,,\n"+
		"b,A100-SXM4-40GB,fp16,gemm,4096,4096,8192,2,,ms,,test,,\n")
	for _, c := range []struct{ max, want string }{
		{"1e6", "row a (line 2): estimated work"},
		{"4e6", "the GEMM rows' estimated work"},
	} {
		_, errOut, code := capture(t, func() int {
			return dispatch([]string{"validate", "--points", small, "--quiet", "--max-work", c.max})
		})
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "above --max-work") {
			t.Errorf("--max-work %s: exit %d: %s", c.max, code, errOut)
		}
	}
}
