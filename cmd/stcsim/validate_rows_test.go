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
	got, err := selectPoints(pts, "^gemm-", []string{"gemm"})
	if err != nil || len(got) == 0 {
		t.Fatalf("^gemm- gemm rows: %d, %v", len(got), err)
	}
	for _, p := range got {
		if !strings.HasPrefix(p.ID, "gemm-") || p.Kind != "gemm" {
			t.Errorf("selected %s (%s)", p.ID, p.Kind)
		}
	}
	peaks, _ := selectPoints(pts, "", []string{"peak"})
	for _, p := range peaks {
		if p.Kind != "peak" {
			t.Errorf("--kind peak selected %s (%s)", p.ID, p.Kind)
		}
	}
	if all, _ := selectPoints(pts, "", nil); len(all) != len(pts) {
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
