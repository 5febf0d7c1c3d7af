package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The messages of the two trace-row rules every entry point applies
// (workloads.GEMM.Validate and tensorcore.Config.CheckPattern, through
// sim.Check).
const (
	kRule       = "is not a whole number of the 4-wide groups of sparsity 2:4"
	patternRule = "sparsity 1:2: the fp16 sparse datapath runs 2:4 (tensorcore.fp16.sparse_pattern)"
)

// TestEveryEntryPointGivesTheSameAnswer: the same bad row is rejected with
// the same message, exit 2 and nothing on standard output, by run --gemm,
// run --workload FILE, trace check, and sweep (a GEMM list and a trace).
func TestEveryEntryPointGivesTheSameAnswer(t *testing.T) {
	dir := t.TempDir()
	header := "name,m,n,k,precision,sparsity,count,batch\n"
	oddK := writeFile(t, dir, "oddk.csv", header+"l1,128,128,1030,fp16,2:4,1,1\n")
	wrongPat := writeFile(t, dir, "pat.csv", header+"l1,128,128,1024,fp16,1:2,1,1\n")
	sweepGEMM := writeFile(t, dir, "g.yaml", "workloads: [{gemms: [512x512x514]}]\n")
	sweepK := writeFile(t, dir, "k.yaml", "workloads: [{trace: oddk.csv}]\n")
	sweepPat := writeFile(t, dir, "p.yaml", "workloads: [{trace: pat.csv}]\n")
	db := filepath.Join(dir, "s.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run --gemm", []string{"run", "--quiet", "--gemm", "512x512x514"}, "K=514 " + kRule},
		{"run trace K", []string{"run", "--quiet", "--workload", oddK}, "oddk.csv:2:12: k: K=1030 " + kRule},
		{"trace check K", []string{"trace", "check", oddK}, "oddk.csv:2:12: k: K=1030 " + kRule},
		{"sweep gemms K", []string{"sweep", sweepGEMM, "--db", db}, "K=514 " + kRule},
		{"sweep trace K", []string{"sweep", sweepK, "--db", db}, "oddk.csv:2:12: k: K=1030 " + kRule},
		{"run trace pattern", []string{"run", "--quiet", "--workload", wrongPat}, "layer l1: " + patternRule},
		{"trace check pattern", []string{"trace", "check", wrongPat}, "layer l1: " + patternRule},
		{"sweep trace pattern", []string{"sweep", sweepPat, "--db", db}, "layer l1: " + patternRule},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := capture(t, func() int { return dispatch(tc.args) })
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("message %q does not say %q", errOut, tc.want)
			}
			if out != "" {
				t.Errorf("wrote to stdout: %q", out)
			}
		})
	}
}

// TestRulesFollowTheConfigAndMode: a dense-only --gemm run has no
// sparsity groups to fill, and trace check applies the config it is given.
func TestRulesFollowTheConfigAndMode(t *testing.T) {
	dir := t.TempDir()
	pat := writeFile(t, dir, "pat.csv", "name,m,n,k,precision,sparsity,count,batch\n"+
		"l1,128,128,1024,fp16,1:2,1,1\n")
	if _, errOut, code := capture(t, func() int {
		return dispatch([]string{"run", "--quiet", "--mode", "dense",
			"--gemm", "64x64x66", "--format", "csv"})
	}); code != exitOK {
		t.Errorf("dense --gemm 64x64x66: exit %d: %s", code, errOut)
	}
	sets := []string{"--set", "tensorcore.fp16.sparse_pattern=1:2", "--set",
		"tensorcore.fp16.sparse_shape=m16n8k32", "--set", "tensorcore.fp16.metadata_bits=4"}
	if _, errOut, code := capture(t, func() int {
		return dispatch(append(append([]string{"trace", "check"}, sets...), pat))
	}); code != exitOK {
		t.Errorf("trace check on a 1:2 fp16 config: exit %d: %s", code, errOut)
	}
}
