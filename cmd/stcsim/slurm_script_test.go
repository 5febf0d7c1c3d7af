package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/slurm-sweep.sh: --print-only prints the two sbatch commands and
// creates nothing; without sbatch it fails before creating anything. The
// stcsim it calls is a stub that accepts the dry run (the script's own
// logic is under test, not the sweep).
func TestSlurmSweepScriptPrintOnlyAndNoSbatch(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	stub := filepath.Join(dir, "stcsim")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join("..", "..", "configs", "sweeps", "example.yaml")
	script := filepath.Join("..", "..", "scripts", "slurm-sweep.sh")
	out := filepath.Join(dir, "res.db")
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		// A PATH with no sbatch on it (bash, seq and the like stay).
		cmd.Env = append(os.Environ(), "STCSIM="+stub, "PATH=/usr/bin:/bin")
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return so.String(), se.String(), code
	}
	if _, err := exec.LookPath("sbatch"); err == nil {
		t.Skip("sbatch on PATH: the no-sbatch case cannot be tested here")
	}
	so, se, code := run("--print-only", spec, "3", out)
	if code != 0 {
		t.Fatalf("--print-only: exit %d: %s", code, se)
	}
	lines := strings.Split(strings.TrimSpace(so), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "--array=1-3") ||
		!strings.Contains(lines[1], "--dependency=afterok:") || !strings.Contains(lines[1], "merge") {
		t.Errorf("--print-only printed:\n%s", so)
	}
	if _, err := os.Stat(out + ".shards"); !os.IsNotExist(err) {
		t.Errorf("--print-only created %s.shards", out)
	}
	_, se, code = run(spec, "3", out)
	if code != 2 || !strings.Contains(se, "sbatch not found") {
		t.Errorf("without sbatch: exit %d, %q", code, se)
	}
	if _, err := os.Stat(out + ".shards"); !os.IsNotExist(err) {
		t.Errorf("a failed submission left %s.shards behind", out)
	}
}
