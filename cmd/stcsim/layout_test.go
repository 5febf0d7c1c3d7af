package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunLayout: --layout sets every row's layout and the record says
// which ran; sparse activations run the transposed GEMM in the
// transposed layout (nn becomes tt: D^T = B^T A^T), cycle for cycle.
func TestRunLayout(t *testing.T) {
	tile := []string{"--set", "kernel.force=256x128x64_64x64_s3"}
	for _, l := range []string{"nn", "nt", "tn", "tt"} {
		r := sparseRecord(t, "256x512x512", append(tile, "--layout", l)...)
		if r["layout"] != l {
			t.Errorf("--layout %s: record layout %v", l, r["layout"])
		}
	}
	a := sparseRecord(t, "256x1024x512", append(tile, "--layout", "nn", "--sparse-operand", "activations")...)
	tr := sparseRecord(t, "1024x256x512", append(tile, "--layout", "tt")...)
	if a["cycles"] != tr["cycles"] {
		t.Errorf("nn with sparse activations: %v cycles; the transposed GEMM in tt: %v", a["cycles"], tr["cycles"])
	}
}

// Bad layouts exit 2 before anything runs, naming the flag, or the
// file, line and field of the trace.
func TestRunLayoutErrors(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(trace, []byte("name,m,n,k,precision,sparsity,count,batch,layout\n"+
		"a,256,256,256,fp16,2:4,1,1,tn\nb,256,256,256,fp16,2:4,1,1,xt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gemm", "256x256x256", "--layout", "TN"}, `--layout "TN": want one of nn, nt, tn, tt`},
		{[]string{"--gemm", "256x256x256", "--layout", "nt", "--precision", "int8"}, "layout nt at int8"},
		{[]string{"--workload", trace}, "t.csv:3:28: layout: unknown layout \"xt\""},
	} {
		_, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"run", "--quiet"}, tc.args...))
		})
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
