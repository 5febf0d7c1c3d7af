package sim

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// TestRunChecksRowsFirst: the Go API rejects, before simulating, the rows
// the trace parser and the commands reject, with the same messages.
func TestRunChecksRowsFirst(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := func(k int, prec tensorcore.Precision, sparsity string) Job {
		tr := &workloads.Trace{Name: "w", GEMMs: []workloads.GEMM{{Name: "l1",
			M: 128, N: 128, K: k, Precision: prec, Sparsity: sparsity,
			Count: 1, Batch: 1}}}
		return Job{Workloads: []*workloads.Trace{tr}, Modes: tensorcore.Modes}
	}
	tests := []struct {
		name string
		job  Job
		want string // "" = accepted
	}{
		{"K not in groups", row(1030, tensorcore.FP16, "2:4"),
			"trace w GEMM 1 (l1): k: K=1030 is not a whole number of the 4-wide groups of sparsity 2:4"},
		{"pattern the datapath does not run", row(1024, tensorcore.FP16, "1:2"),
			"workload w layer l1: sparsity 1:2: the fp16 sparse datapath runs 2:4"},
		{"tf32 runs 1:2", row(1024, tensorcore.TF32, "1:2"), ""},
		{"dense row, any K", row(1030, tensorcore.FP16, "dense"), ""},
		{"bad mode", Job{Modes: []tensorcore.Mode{7}}, "unknown mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(ld.Config, tc.job)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
			if _, runErr := Run(ld, tc.job); runErr == nil || runErr.Error() != err.Error() {
				t.Errorf("Run: %v, want Check's %v", runErr, err)
			}
		})
	}
	dense := row(1024, tensorcore.FP16, "1:2")
	dense.Modes = []tensorcore.Mode{tensorcore.Dense}
	if err := Check(ld.Config, dense); err != nil {
		t.Errorf("a dense-only job checks the sparse pattern: %v", err)
	}
}

// TestBuiltInModelsPassCheck: what the generators make is what the rules
// accept, on the default config, in every precision and at odd batches.
func TestBuiltInModelsPassCheck(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range workloads.Models() {
		for _, p := range tensorcore.Precisions {
			for _, b := range []int{1, 3, 32} {
				tr, err := workloads.Build(m, workloads.Options{Batch: b, Precision: p})
				if err != nil {
					t.Fatal(err)
				}
				job := Job{Workloads: []*workloads.Trace{tr}, Modes: tensorcore.Modes}
				if err := Check(ld.Config, job); err != nil {
					t.Errorf("%s %v batch %d: %v", m, p, b, err)
				}
			}
		}
	}
}

// TestRowsTaggedWithTheHardwarePatternRunTheConfigs: a 2:4 fp16 row (the
// hardware's tag) runs the config's pattern, so its K must fit that one; a
// row naming another pattern must be the one the tensor core runs.
func TestRowsTaggedWithTheHardwarePatternRunTheConfigs(t *testing.T) {
	ld, err := configs.Load(nil, []string{"tensorcore.fp16.sparse_pattern=2:8",
		"tensorcore.fp16.metadata_bits=3", "tensorcore.fp16.sparse_shape=m16n8k64"})
	if err != nil {
		t.Fatal(err)
	}
	job := func(k int, sparsity, weights string) Job {
		tr := &workloads.Trace{Name: "w", GEMMs: []workloads.GEMM{{Name: "l1",
			M: 128, N: 128, K: k, Precision: tensorcore.FP16, Sparsity: sparsity,
			Weights: weights, Count: 1, Batch: 1}}}
		return Job{Workloads: []*workloads.Trace{tr}, Modes: tensorcore.Modes}
	}
	for _, tc := range []struct {
		name string
		job  Job
		want string
	}{
		{"tag runs 2:8", job(1024, "2:4", ""), ""},
		{"K fits 2:4, not 2:8", job(1028, "2:4", ""), "K=1028 is not a whole number of the 8-wide groups of sparsity 2:8"},
		{"a weight file keeps its 2:4", job(1024, "2:4", "w.npy"), "sparsity 2:4: the fp16 sparse datapath runs 2:8"},
	} {
		err := Check(ld.Config, tc.job)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
