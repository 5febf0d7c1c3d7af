package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeGridSweep writes a sweep of n1 x n2 points (gpu.sm_count in steps
// of 108/n1 up to 108 x dram.bandwidth_gbps in steps of 100) over BERT-base's three GEMMs at
// 512 tokens, dense and sparse, and returns its path.
func writeGridSweep(tb testing.TB, n1, n2 int) string {
	tb.Helper()
	sm := make([]string, n1)
	for i := range sm {
		sm[i] = fmt.Sprint(108 * (i + 1) / n1)
	}
	bw := make([]string, n2)
	for i := range bw {
		bw[i] = fmt.Sprint(100 * (i + 1))
	}
	spec := fmt.Sprintf(`name: grid
configs: [a100-40gb]
workloads:
  - name: bert-base-512
    gemms: [768x512x768, 3072x512x768, 768x512x3072]
    precision: fp16
modes: [dense, sparse]
grid:
  gpu.sm_count: [%s]
  dram.bandwidth_gbps: [%s]
`, strings.Join(sm, ", "), strings.Join(bw, ", "))
	path := filepath.Join(tb.TempDir(), "grid.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkDryRunPlanning is `stcsim sweep --dry-run --quiet` of a
// 100-point grid (issue 35 item 3: planning must cost well under a
// millisecond of CPU per point); ns/op divided by 100 is the cost of
// planning one point.
func BenchmarkDryRunPlanning(b *testing.B) {
	path := writeGridSweep(b, 10, 10)
	db := filepath.Join(b.TempDir(), "grid.db")
	for b.Loop() {
		if code := runSweep([]string{"--dry-run", "--quiet", "--db", db, path}); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
