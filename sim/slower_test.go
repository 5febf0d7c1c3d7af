package sim

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// A sparse record slower than its dense one says so, naming both
// kernels and the largest cause of its loss; a faster one carries no
// such note.
func TestSlowerSparseSaysWhy(t *testing.T) {
	rep := &Report{Results: []LayerResult{
		{Workload: "w", Layer: "l", Mode: tensorcore.Dense, TimeUS: 10, Kernel: "dense-k",
			Breakdown: Breakdown{Compute: 1}},
		{Workload: "w", Layer: "l", Mode: tensorcore.Sparse, SparseApplied: true, TimeUS: 12,
			Kernel: "sparse-k", Explain: results.Explain{IdealSpeedup: 2}, Breakdown: Breakdown{Compute: 0.5, DRAMLatency: 0.5}},
		{Workload: "w", Layer: "m", Mode: tensorcore.Dense, TimeUS: 10, Kernel: "dense-k"},
		{Workload: "w", Layer: "m", Mode: tensorcore.Sparse, SparseApplied: true, TimeUS: 8, Kernel: "sparse-k"},
	}}
	addSpeedups(rep)
	slow := rep.Results[1].Note
	for _, want := range []string{"sparse is slower than dense (0.83x)", "sparse-k", "dense-k", "dram_latency"} {
		if !strings.Contains(slow, want) {
			t.Errorf("slower record's note %q lacks %q", slow, want)
		}
	}
	if n := rep.Results[3].Note; strings.Contains(n, "slower") {
		t.Errorf("a faster sparse record says it is slower: %q", n)
	}
}
