package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// sparseRecord runs one sparse --gemm with extra flags and returns its
// record.
func sparseRecord(t *testing.T, gemm string, flags ...string) map[string]any {
	t.Helper()
	args := append([]string{"run", "--gemm", gemm, "--mode", "sparse", "--format", "json",
		"--quiet", "--set", "kernel.force=128x128x64_64x64_s3"}, flags...)
	out, stderr, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", flags, code, stderr)
	}
	var doc struct{ Results []map[string]any }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Results) != 1 {
		t.Fatalf("%v: %v in %s", flags, err, out)
	}
	return doc.Results[0]
}

// TestRunPatternAndOperand: --gemm rows take the config's sparse_pattern
// (2:8 moves 3/2 the metadata of 1:4, which keeps as many values), and
// --sparse-operand activations runs the transposed GEMM, cycle for cycle.
func TestRunPatternAndOperand(t *testing.T) {
	p14 := sparseRecord(t, "256x512x512", "--set", "tensorcore.fp16.sparse_pattern=1:4")
	p28 := sparseRecord(t, "256x512x512", "--set", "tensorcore.fp16.sparse_pattern=2:8")
	if p14["pattern"] != "1:4" || p28["pattern"] != "2:8" {
		t.Fatalf("patterns %v, %v", p14["pattern"], p28["pattern"])
	}
	if m14, m28 := p14["metadata_bytes"].(float64), p28["metadata_bytes"].(float64); m14 == 0 || 2*m28 != 3*m14 {
		t.Errorf("metadata bytes 1:4 %g, 2:8 %g: want 2:8 = 3/2 x 1:4", m14, m28)
	}
	// Sparse activations run as the transposed GEMM: 256x1024x512 with
	// pruned activations is 1024x256x512 with pruned weights, cycle for
	// cycle. With a non-square CTA tile (256x128) the transposed GEMM tiles
	// differently, so it must differ from running the weights sparse; with
	// a square tile the two are symmetric and may agree.
	tile := []string{"--set", "kernel.force=256x128x64_64x64_s3"}
	w := sparseRecord(t, "256x1024x512", tile...)
	a := sparseRecord(t, "256x1024x512", append(tile, "--sparse-operand", "activations")...)
	tr := sparseRecord(t, "1024x256x512", tile...)
	if w["sparse_operand"] != "weights" || a["sparse_operand"] != "activations" {
		t.Fatalf("sparse_operand %v, %v", w["sparse_operand"], a["sparse_operand"])
	}
	if a["m"] != w["m"] || a["n"] != w["n"] {
		t.Errorf("activations record shape %vx%v, want the row's %vx%v", a["m"], a["n"], w["m"], w["n"])
	}
	if a["cycles"] != tr["cycles"] || a["metadata_bytes"] != tr["metadata_bytes"] {
		t.Errorf("activations: %v cycles, %v metadata bytes; the transposed GEMM with sparse weights: %v, %v",
			a["cycles"], a["metadata_bytes"], tr["cycles"], tr["metadata_bytes"])
	}
	if a["cycles"] == w["cycles"] {
		t.Errorf("activations ran as weights: %v cycles both", a["cycles"])
	}
}

func TestRunPatternErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sparse-operand", "both"}, "--sparse-operand"},
		{[]string{"--set", "tensorcore.fp16.sparse_pattern=3:8"}, "not a whole number"},
		{[]string{"--set", "tensorcore.fp16.selector_fan_in=1"}, "selector_fan_in"},
	} {
		_, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"run", "--gemm", "256x256x256", "--quiet"}, tc.args...))
		})
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestConfigShowDerivesDatapaths: config show prints each precision's
// derived interval and latency, which follow a --set of a structural key,
// and names the key's source.
func TestConfigShowDerivesDatapaths(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want []string
	}{
		{nil, []string{"# fp16 dense (m16n8k16): interval 8 cycles, latency 32 cycles",
			"# fp16 sparse 2:4 (m16n8k32): interval 8 cycles, latency 36 cycles",
			"# int8 sparse 2:4 (m16n8k64): interval 8 cycles",
			"multipliers              = 256      a100-40gb.yaml (built-in):"}},
		{[]string{"--set", "tensorcore.fp16.b_operand_bytes_per_clk=32"},
			[]string{"# fp16 sparse 2:4 (m16n8k32): interval 16 cycles, latency 44 cycles",
				"set by overridden: b_operand_bytes_per_clk"}},
	} {
		out, code := captureStdout(t, func() int {
			return dispatch(append([]string{"config", "show"}, tc.set...))
		})
		for _, w := range tc.want {
			if code != exitOK || !strings.Contains(out, w) {
				t.Errorf("%v: exit %d, output lacks %q", tc.set, code, w)
			}
		}
	}
}
