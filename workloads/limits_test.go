package workloads

import (
	"math"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// MAC counts never wrap around: a workload of 200 rows of 2^56 MACs is
// refused by Validate and its MACs saturate (issue 13 items 6, 20).
func TestMACsDoNotOverflow(t *testing.T) {
	g := GEMM{Name: "g", M: 1 << 20, N: 1 << 20, K: 1 << 16, Precision: tensorcore.FP16,
		Sparsity: Sparse24, Count: 1, Batch: 1}
	if err := g.Validate(); err != nil {
		t.Fatalf("a 2^56-MAC row: %v", err)
	}
	tr := &Trace{Name: "big"}
	for i := 0; i < 200; i++ {
		tr.GEMMs = append(tr.GEMMs, g)
	}
	if m := tr.MACs(); m < 1<<62 {
		t.Errorf("MACs of 200 x 2^56 = %d: wrapped around", m)
	}
	if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "above the limit") {
		t.Errorf("Validate: %v", err)
	}
	huge := GEMM{M: MaxDim, N: MaxDim, K: MaxDim, Batch: MaxDim}
	if huge.MACs() != math.MaxInt64 {
		t.Errorf("2^120 MACs = %d, want saturation", huge.MACs())
	}
}
