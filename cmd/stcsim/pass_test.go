package main

import (
	"encoding/json"
	"math"
	"os"
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
		{[]string{"--pass", "backward", "--activation-sparsity", "forward"}, "leaves out"},
		{[]string{"--pass", "step", "--transposable", "--sparse-operand", "activations"},
			"would change nothing"},
		{[]string{"--pass", "step", "--activation-sparsity", "forward",
			"--activation-layers", "nothing"}, "matches no linear layer"},
		{[]string{"--workload", "../../workloads/testdata/tiny-profile.json", "--pass", "step"},
			"is a PyTorch profiler trace"},
	} {
		args := append([]string{"run", "--gemm", "256x128x512", "--quiet"}, c.args...)
		_, errOut, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d naming %q", c.args, code, errOut,
				exitUsage, c.want)
		}
	}
}

// prune --transposable on a weight file: the mask it writes verifies as
// transposable (checked again by prune --verify --transposable, which
// refuses the plain mask), and it keeps less magnitude than the plain
// mask but more than zero: a measured property of the weights.
func TestPruneTransposableReportsBothMasks(t *testing.T) {
	const in = "../../workloads/testdata/gaussian-linear.npy"
	dir := t.TempDir()
	out, errOut, code := capture(t, func() int {
		return dispatch([]string{"prune", "--in", in, "--transposable", "--out", dir + "/t",
			"--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s struct {
		Kept         float64 `json:"kept_magnitude_fraction"`
		Plain        float64 `json:"plain_kept_magnitude_fraction"`
		Transposable bool    `json:"transposable"`
		Valid        bool    `json:"valid_mask"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if !s.Transposable || !s.Valid || !(s.Kept > 0.5 && s.Kept < s.Plain && s.Plain < 1) {
		t.Errorf("summary %+v: want a valid transposable mask keeping less than the plain one", s)
	}
	_, errOut, code = capture(t, func() int {
		return dispatch([]string{"prune", "--in", dir + "/t/pruned.npy", "--transposable", "--verify"})
	})
	if code != exitOK {
		t.Errorf("the transposable mask does not verify: exit %d: %s", code, errOut)
	}
	_, _, code = capture(t, func() int {
		return dispatch([]string{"prune", "--in", in, "--out", dir + "/p"})
	})
	if code != exitOK {
		t.Fatalf("plain prune: exit %d", code)
	}
	_, _, code = capture(t, func() int {
		return dispatch([]string{"prune", "--in", dir + "/p/pruned.npy", "--transposable", "--verify"})
	})
	if code == exitOK {
		t.Error("the plain mask verified as transposable")
	}
}

// The activation sparsifier is a kernel of the sparse step: its record
// (pass overhead, sparse mode only) is in the sparse total, which is the
// sum of every sparse record's time x count and so more than the GEMMs'
// alone; its traffic is X read and the compressed forms written.
func TestStepTotalIncludesSparsifier(t *testing.T) {
	args := []string{"run", "--gemm", "256x128x512", "--pass", "step", "--activation-sparsity",
		"step", "--activation-layers", ".", "--format", "json", "--quiet", "--no-cache",
		"--set", "gpu.sm_count=8"}
	out, errOut, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Results []struct {
			Layer, Mode, Pass, Bound string
			TimeUS                   float64 `json:"time_us"`
			Count                    int
			DRAMRead                 uint64 `json:"dram_read_bytes"`
			DRAMWrite                uint64 `json:"dram_write_bytes"`
		}
		Totals []struct {
			Mode   string
			TimeUS float64 `json:"time_us"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var gemms, over float64
	found := 0
	for _, r := range doc.Results {
		if r.Mode != "sparse" {
			if r.Pass == "overhead" {
				t.Errorf("dense step has a sparsifier record %s", r.Layer)
			}
			continue
		}
		if r.Pass == "overhead" {
			found++
			if r.Bound == "" {
				t.Error("the sparsifier record names no limiter")
			}
			over += r.TimeUS * float64(r.Count)
			// X is 512 x 128 fp16; values half of it and metadata 1/16, twice.
			const x = 512 * 128 * 2
			if r.DRAMRead < x || r.DRAMWrite < 2*(x/2+x/16) {
				t.Errorf("sparsifier traffic read %d, wrote %d; want >= %d and %d",
					r.DRAMRead, r.DRAMWrite, x, 2*(x/2+x/16))
			}
			continue
		}
		gemms += r.TimeUS * float64(r.Count)
	}
	if found != 1 || over <= 0 {
		t.Fatalf("%d sparsifier records (%.2f µs), want 1", found, over)
	}
	for _, tot := range doc.Totals {
		if tot.Mode == "sparse" && math.Abs(tot.TimeUS-(gemms+over)) > 1e-6*tot.TimeUS {
			t.Errorf("sparse total %.3f µs, want GEMMs %.3f + sparsifier %.3f", tot.TimeUS, gemms, over)
		}
	}
}

// docs/trace-format.md quotes what prune --transposable keeps of the
// Gaussian fixture; the command as the page gives it prints those
// figures.
func TestPruneTransposableDocFigures(t *testing.T) {
	out, errOut, code := capture(t, func() int {
		return dispatch([]string{"prune", "--in", "../../workloads/testdata/gaussian-linear.npy",
			"--transposable", "--out", t.TempDir()})
	})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc, err := os.ReadFile("../../docs/trace-format.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"70.34", "74.50"} {
		inDoc := strings.Contains(string(doc), f+"%") || strings.Contains(string(doc), f+" %")
		if !strings.Contains(out, f+"%") || !inDoc {
			t.Errorf("%s%% not in both the output and docs/trace-format.md:\n%s", f, out)
		}
	}
}
