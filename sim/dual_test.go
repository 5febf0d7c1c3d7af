package sim

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// TestDualSideRecords: with tensorcore.dual_side the sparse record says it
// ran dual-side, with which masks, and its metadata includes B's.
func TestDualSideRecords(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 512, 512})
	job.Modes = []tensorcore.Mode{tensorcore.Sparse}
	force := "kernel.force=128x128x64_64x64_s3"
	single := run(t, job, force).Results[0]
	dual := run(t, job, force, "tensorcore.dual_side=true").Results[0]
	if single.DualSide || !dual.DualSide || !strings.Contains(dual.Masks, "synthetic (mask_seed 1)") {
		t.Fatalf("single %+v, dual %+v", single, dual)
	}
	// A's metadata per kept value is unchanged; B adds as much again
	// (same kept K, as many rows of B as of A here).
	if dual.MetadataBytes != 2*single.MetadataBytes {
		t.Errorf("metadata bytes: single %d, dual %d, want twice", single.MetadataBytes, dual.MetadataBytes)
	}
	if p := dual.DualProducts; p < 2000 || p > 2100 {
		t.Errorf("%d products per dual MMA, want about 2048 (independent 2:4 masks)", p)
	}
	other := run(t, job, force, "tensorcore.dual_side=true", "tensorcore.mask_seed=7").Results[0]
	if !strings.Contains(other.Masks, "mask_seed 7") {
		t.Errorf("mask_seed 7: %q", other.Masks)
	}
}

// TestDualSideWeightMask: a row with a weight file takes A's mask from it.
func TestDualSideWeightMask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := workloads.SyntheticWeights(128, 256, 3)
	pruned := tensorcore.PruneMagnitude(w, tensorcore.Pattern{N: 2, M: 4})
	path := dir + "/w.npy"
	if err := writeNPYFile(path, pruned); err != nil {
		t.Fatal(err)
	}
	tr := &workloads.Trace{Name: "w", GEMMs: []workloads.GEMM{{Name: "l", M: 128, N: 256,
		K: 256, Precision: tensorcore.FP16, Sparsity: "2:4", Count: 1, Batch: 1, Weights: path}}}
	job := Job{Workloads: []*workloads.Trace{tr}, Modes: []tensorcore.Mode{tensorcore.Sparse}}
	rep := run(t, job, "tensorcore.dual_side=true")
	r := rep.Results[0]
	if !strings.Contains(r.Masks, "A from weights "+path) {
		t.Errorf("masks %q", r.Masks)
	}
	// The provenance hashes the weights' content, which the trace's own
	// hash does not cover: other weights under the same name, other hash.
	ws := rep.Provenance.Workloads[0].Weights
	if len(ws) != 1 || ws[0].Path != path || len(ws[0].SHA256) != 64 {
		t.Fatalf("weights provenance %+v", ws)
	}
	other := tensorcore.PruneMagnitude(workloads.SyntheticWeights(128, 256, 4), tensorcore.Pattern{N: 2, M: 4})
	if err := writeNPYFile(path, other); err != nil {
		t.Fatal(err)
	}
	h, err := workloads.HashWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	if h == ws[0].SHA256 {
		t.Errorf("other weights, same hash %s", h)
	}
}

func writeNPYFile(path string, m tensorcore.Matrix) error {
	var b bytes.Buffer
	if err := tensorfile.WriteNPY(&b, []int{m.Rows, m.Cols}, m.Data); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
