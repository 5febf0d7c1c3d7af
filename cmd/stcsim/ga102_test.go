package main

import (
	"strings"
	"testing"
)

// TestForcedKernelOverSharedMemory: pinning a kernel whose stages need
// more shared memory than the config allows exits 2 before anything
// runs, naming the kernel, its bytes and the limit.
func TestForcedKernelOverSharedMemory(t *testing.T) {
	stdout, stderr, code := capture(t, func() int {
		return dispatch([]string{"run", "--config", "rtx3090", "--gemm", "1024x1024x1024",
			"--mode", "dense", "--quiet", "--cache", "off",
			"--set", "kernel.force=128x128x64_64x64_s4"})
	})
	if code != exitUsage || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want exit %d and no output", code, stdout, exitUsage)
	}
	for _, want := range []string{"128x128x64_64x64_s4", "131072 bytes", "102400-byte", "shared_memory.carveout_kb"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, stderr)
		}
	}
}

// TestConfigShowSourcesGA102: config show prints a source comment on
// every value of rtx3090 (the configs package checks each line; here
// the command prints them).
func TestConfigShowSourcesGA102(t *testing.T) {
	stdout, _, code := capture(t, func() int {
		return dispatch([]string{"config", "show", "--config", "rtx3090"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"partitions: 1 # rtx3090.yaml (built-in):",
		"channels: 24 # rtx3090.yaml (built-in):",
		"accumulate_per_clk: 4 # rtx3090.yaml (built-in):",
		"carveout_kb: 100 # rtx3090.yaml (built-in):",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config show lacks %q", want)
		}
	}
	if strings.Contains(stdout, "(no source comment)") {
		t.Errorf("config show prints a value without a source")
	}
}
