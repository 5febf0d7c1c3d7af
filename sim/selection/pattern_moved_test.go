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
// each) times the pattern's index bits (ceil(log2 M); 4 for 1:2) / 8, and
// patterns that keep the same fraction move the same A values: 1:4 and
// 2:8 keep K/4 per row, but 2:8 indexes each with 3 bits instead of 2
// (TestMetadataBytes2048, in the long tier, holds the same on 2048^3).
func TestMetadataBytesFollowPattern(t *testing.T) {
	t.Parallel()
	aBytes := map[float64]uint64{} // by kept fraction
	for _, pat := range []tensorcore.Pattern{{N: 1, M: 2}, {N: 2, M: 4}, {N: 1, M: 4},
		{N: 2, M: 8}, {N: 4, M: 8}} {
		r := patternKernel(t, 512, 512, 512, pat, "kernel.force=128x128x64_64x64_s3")
		a := r.Mem.PerClass[memory.AValues].L2Bytes
		kept := a / 2
		want := kept * uint64(pat.MetadataBits()) / 8
		if got := r.Mem.MetadataBytes(); got != want || kept == 0 {
			t.Errorf("%s: %d metadata bytes for %d kept values, want %d", pat, got, kept, want)
		}
		frac := float64(pat.N) / float64(pat.M)
		if prev, ok := aBytes[frac]; ok && prev != a {
			t.Errorf("%s: %d A value bytes, %d for another pattern keeping %.2f", pat, a, prev, frac)
		}
		aBytes[frac] = a
	}
}
