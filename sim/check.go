package sim

import (
	"fmt"
	"slices"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Check says whether the job can run on the config, before anything is
// simulated: every row is valid (workloads.GEMM.Validate: the rules of a
// trace row, the same a trace file is parsed with) and, when the job runs
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
		for _, g := range w.GEMMs {
			if err := checkRow(cfg, g, sparse); err != nil {
				return fmt.Errorf("workload %s layer %s: %w", w.Name, g.Name, err)
			}
		}
	}
	return nil
}

func checkRow(cfg *configs.Config, g workloads.GEMM, sparse bool) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if _, err := cfg.TensorCore.Get(g.Precision); err != nil {
		return err
	}
	if !sparse || g.Sparsity == workloads.Dense {
		return nil
	}
	return cfg.TensorCore.CheckPattern(g.Precision, g.Sparsity)
}
