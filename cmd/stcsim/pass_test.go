package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// stepRecords runs a small GEMM's training step (sparse mode only) and
// returns its records by layer.
func stepRecords(t *testing.T, extra ...string) map[string]map[string]any {
	t.Helper()
	args := append([]string{"run", "--gemm", "256x128x512", "--pass", "step",
		"--mode", "sparse", "--format", "json", "--quiet", "--no-cache", "--set", "gpu.sm_count=8"}, extra...)
	out, errOut, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var doc struct{ Results []map[string]any }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	recs := map[string]map[string]any{}
	for _, r := range doc.Results {
		recs[r["layer"].(string)] = r
	}
	return recs
}

// The data gradient reduces along W's output dimension: with a plain
// mask (2:4 along K only) it must be timed dense, and sparse only with
// --transposable.
func TestStepDgradSparseOnlyWithTransposableMask(t *testing.T) {
	for _, transposable := range []bool{false, true} {
		var extra []string
		if transposable {
			extra = append(extra, "--transposable")
		}
		recs := stepRecords(t, extra...)
		dX := recs["256x128x512.dX"]
		if dX == nil {
			t.Fatalf("no dX record: %v", recs)
		}
		if got := dX["sparse_applied"].(bool); got != transposable {
			t.Errorf("transposable=%v: dX timed sparse=%v", transposable, got)
		}
		if fwd := recs["256x128x512.fwd"]; fwd["sparse_applied"] != true ||
			fwd["sparse_along"] != "W along K (512)" {
			t.Errorf("forward: %v, %v", fwd["sparse_applied"], fwd["sparse_along"])
		}
		if dW := recs["256x128x512.dW"]; dW["sparse_applied"] != false || dW["pass"] != "wgrad" {
			t.Errorf("dW: sparse %v, pass %v", dW["sparse_applied"], dW["pass"])
		}
	}
}

func TestPassFlagsRefuseWhatChangesNothing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pass", "sideways"}, "--pass"},
		{[]string{"--transposable"}, "--transposable needs --pass"},
		{[]string{"--pass", "step", "--activation-layers", "ffn"}, "needs --activation-sparsity"},
		{[]string{"--activation-sparsity", "step"}, "needs --pass backward or step"},
		{[]string{"--pass", "step", "--activation-sparsity", "forward",
			"--activation-layers", "nothing"}, "matches no linear layer"},
	} {
		args := append([]string{"run", "--gemm", "256x128x512", "--quiet"}, c.args...)
		_, errOut, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d naming %q", c.args, code, errOut,
				exitUsage, c.want)
		}
	}
}
