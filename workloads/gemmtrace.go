package workloads

import (
	"fmt"

	"github.com/stcsim/stcsim/tensorcore"
)

// GEMMTrace makes the "gemm" workload of GEMM shapes MxNxK (specs), each GEMM a
// batched kernel of batch GEMMs: rows of the precision's sparsity when
// the run is sparse, dense rows otherwise (a dense run does not ask K to
// be a whole number of sparsity groups). The rows are checked against the
// trace rules (Trace.Validate) where the job is: sim.Prepare, the one
// front door of a run.
func GEMMTrace(specs []string, precision tensorcore.Precision, sparse bool, batch int) (*Trace, error) {
	sparsity := Dense
	if sparse {
		sparsity = SparsityFor(precision)
	}
	t := &Trace{Name: "gemm"}
	seen := map[string]bool{}
	for _, s := range specs {
		m, n, k, err := ParseGEMM(s)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%dx%dx%d", m, n, k)
		if seen[name] {
			return nil, fmt.Errorf("%s given twice: each GEMM runs "+
				"once (use a trace file's count column to repeat one)", name)
		}
		seen[name] = true
		t.GEMMs = append(t.GEMMs, GEMM{Name: name, M: m, N: n,
			K: k, Precision: precision, Sparsity: sparsity, Count: 1,
			Batch: batch})
	}
	return t, nil
}
