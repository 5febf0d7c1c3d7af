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
	t.Parallel()
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
		{"pattern the datapath does not run", row(1024, tensorcore.FP16, "3:8"),
			"workload w layer l1: sparsity 3:8: the fp16 sparse datapath cannot run it"},
		{"a row's own pattern", row(1024, tensorcore.FP16, "2:8"), ""},
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
	dense := row(1024, tensorcore.FP16, "3:8")
	dense.Modes = []tensorcore.Mode{tensorcore.Dense}
	if err := Check(ld.Config, dense); err != nil {
		t.Errorf("a dense-only job checks the sparse pattern: %v", err)
	}
}

// TestBuiltInModelsPassCheck: what the generators make is what the rules
// accept, on the default config, in every precision and at odd batches.
func TestBuiltInModelsPassCheck(t *testing.T) {
	t.Parallel()
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
// row with a weight file keeps its own pattern, which the datapath runs
// as any N:M whose instruction is whole.
func TestRowsTaggedWithTheHardwarePatternRunTheConfigs(t *testing.T) {
	t.Parallel()
	ld, err := configs.Load(nil, []string{"tensorcore.fp16.sparse_pattern=2:8"})
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
		{"a weight file keeps its 2:4", job(1028, "2:4", "w.npy"), ""},
		{"a pattern no instruction fits", job(1024, "3:8", ""), "sparsity 3:8: the fp16 sparse datapath cannot run it"},
	} {
		err := Check(ld.Config, tc.job)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A config or row that no kernel of the library can run is an input
// error found by Check, before anything is simulated: each of these once
// failed in the middle of a run with exit 1.
func TestCheckFindsWhatNoKernelRuns(t *testing.T) {
	t.Parallel()
	row := func(sparsity string) Job {
		tr := &workloads.Trace{Name: "t", GEMMs: []workloads.GEMM{{Name: "g", M: 1024, N: 1024, K: 1024,
			Precision: tensorcore.FP16, Sparsity: sparsity, Count: 1, Batch: 1}}}
		return Job{Workloads: []*workloads.Trace{tr}, Modes: tensorcore.Modes}
	}
	tf32 := row("1:2")
	tf32.Workloads[0].GEMMs[0].Precision = tensorcore.TF32
	for _, c := range []struct {
		name string
		job  Job
		sets []string
		why  string // what the message must also say
	}{
		{"no shared memory", row("2:4"), []string{"shared_memory.carveout_kb=0"}, ""},
		{"pinned fp16 tile for tf32", tf32, []string{"kernel.force=256x128x32_64x64_s3"},
			"lists it for dense fp16, bf16; sparse tf32 only"},
		{"pinned dense-only tile for sparse", row("2:4"), []string{"kernel.force_sparse=256x128x32_64x64_s3"},
			"lists it for dense fp16, bf16; sparse tf32 only"},
		{"pinned tf32 tile for fp16", row("2:4"), []string{"kernel.force=64x64x32_32x32_s6"},
			"lists it for dense and sparse tf32 only"},
		{"split-K too deep for K", row("2:4"), []string{"kernel.force_dense=64x64x64_32x32_s6_splitk64"}, ""},
		{"pattern no tile's BK holds", row("2:4"), []string{"tensorcore.fp16.sparse_pattern=2:64"}, ""},
		{"row pattern no tile's BK holds", row("1:64"), nil, ""},
	} {
		ld, err := configs.Load(nil, c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = Check(ld.Config, c.job)
		if err == nil || !strings.Contains(err.Error(), "no kernel in the library can run") ||
			!strings.Contains(err.Error(), "layer g") || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: Check: %v", c.name, err)
		}
	}
	ld, _ := configs.Load(nil, nil)
	if err := Check(ld.Config, row("2:4")); err != nil {
		t.Errorf("the default config: %v", err)
	}
}
