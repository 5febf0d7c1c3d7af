package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// Moved from package sim: the metadata traffic of the kernels the
// selection runs, by pattern.

// patternKernel simulates one sparse fp16 GEMM with pattern pat on the
// a100-40gb config plus sets.
func patternKernel(t *testing.T, m, n, k int, pat tensorcore.Pattern, sets ...string) *gpu.Result {
	t.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Select(ld.Config, kernel.Shape{M: m, N: n, K: k, Batch: 1,
		Precision: tensorcore.FP16, Sparse: true, Pattern: pat}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMetadataBytesFollowPattern: for every pattern, the metadata moved
// from L2 is the kept A values moved (the A-values traffic class, 2 bytes
// each) times the pattern's index bits (ceil(log2 M); 4 for 1:2) / 8.
func TestMetadataBytesFollowPattern(t *testing.T) {
	t.Parallel()
	for _, pat := range []tensorcore.Pattern{{N: 1, M: 2}, {N: 2, M: 4}, {N: 1, M: 4},
		{N: 2, M: 8}, {N: 4, M: 8}} {
		r := patternKernel(t, 512, 512, 512, pat, "kernel.force=128x128x64_64x64_s3")
		kept := r.Mem.PerClass[memory.AValues].L2Bytes / 2
		want := kept * uint64(pat.MetadataBits()) / 8
		if got := r.Mem.MetadataBytes(); got != want || kept == 0 {
			t.Errorf("%s: %d metadata bytes for %d kept values, want %d", pat, got, kept, want)
		}
	}
}

// TestMetadataBytes2048: on 2048^3 FP16, 1:4 and 2:8 keep the same values
// (K/4 per row) but 2:8 indexes each with 3 bits instead of 2.
func TestMetadataBytes2048(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	if testing.Short() {
		t.Skip("two 2048^3 simulations")
	}
	force := "kernel.force=128x128x64_64x64_s3"
	a := patternKernel(t, 2048, 2048, 2048, tensorcore.Pattern{N: 1, M: 4}, force)
	b := patternKernel(t, 2048, 2048, 2048, tensorcore.Pattern{N: 2, M: 8}, force)
	ma, mb := a.Mem.MetadataBytes(), b.Mem.MetadataBytes()
	if ma == 0 || 2*mb != 3*ma {
		t.Errorf("metadata bytes 1:4 %d, 2:8 %d: want 2:8 = 3/2 x 1:4", ma, mb)
	}
	if ka, kb := a.Mem.PerClass[memory.AValues].L2Bytes, b.Mem.PerClass[memory.AValues].L2Bytes; ka != kb {
		t.Errorf("A value bytes 1:4 %d, 2:8 %d: want equal", ka, kb)
	}
}
