package sim

import (
	"fmt"
	"slices"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Check says whether the job can run on the config, before anything is
// simulated: every workload is valid (workloads.Trace.Validate: the rules
// of a trace and its rows, the same a trace file is parsed with) and, when
// the job runs
// sparse, the tensor core runs every sparse row's precision and pattern
// (tensorcore.Config.CheckPattern). Run calls it first; sweeps call it for
// every point and trace check for its config, so each entry point gives
// the same answer and the same message.
func Check(cfg *configs.Config, job Job) error {
	for _, m := range job.Modes {
		if !m.Valid() {
			return fmt.Errorf("unknown mode %v", m)
		}
	}
	sparse := slices.Contains(job.Modes, tensorcore.Sparse)
	for _, w := range job.Workloads {
		if len(w.GEMMs) == 0 {
			continue
		}
		if err := w.Validate(); err != nil {
			return err
		}
		for _, g := range w.GEMMs {
			if err := checkRow(cfg, g, sparse); err != nil {
				return fmt.Errorf("workload %s layer %s: %w", w.Name, g.Name, err)
			}
		}
	}
	return nil
}

// checkRow is the config's part: the tensor core runs the pattern the row
// runs with (runPattern), and K is a whole number of its groups.
func checkRow(cfg *configs.Config, g workloads.GEMM, sparse bool) error {
	if _, err := cfg.TensorCore.Get(g.Precision); err != nil {
		return err
	}
	if !sparse || g.Sparsity == workloads.Dense {
		return nil
	}
	pat, err := runPattern(cfg, g)
	if err != nil {
		return err
	}
	if err := cfg.TensorCore.CheckPattern(g.Precision, pat); err != nil {
		return err
	}
	p, err := tensorcore.ParsePattern(pat)
	if err != nil {
		return err
	}
	if g.K%p.M != 0 {
		return fmt.Errorf("k: K=%d is not a whole number of the %d-wide "+
			"groups of sparsity %s (tensorcore.%s.sparse_pattern, which the "+
			"row runs)", g.K, p.M, pat, g.Precision)
	}
	return nil
}

// runPattern is the pattern a sparse row runs with: a row tagged with the
// hardware's pattern of its precision (workloads.SparsityFor), as built-in
// models, --gemm rows and sweep GEMM lists are, and without a weight file
// runs the config's tensorcore.<precision>.sparse_pattern, so one key
// re-prunes a whole network; any other row keeps its own pattern.
func runPattern(cfg *configs.Config, g workloads.GEMM) (string, error) {
	if g.Sparsity != workloads.SparsityFor(g.Precision) || g.Weights != "" {
		return g.Sparsity, nil
	}
	pc, err := cfg.TensorCore.Get(g.Precision)
	if err != nil {
		return "", err
	}
	return pc.SparsePattern, nil
}
