package sim

import (
	"fmt"
	"slices"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
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
				return fmt.Errorf("%s: %w", w.Where(g.Name), err)
			}
			for _, m := range job.Modes {
				if err := checkKernels(cfg, g, m); err != nil {
					return fmt.Errorf("%s: %w", w.Where(g.Name), err)
				}
			}
		}
	}
	return nil
}

// checkKernels: some kernel of the library (or the pinned one) can run
// the row in mode m, so that a config or row no kernel runs (a carveout of
// 0, a pinned tile of another precision, a pattern no tile offers) is an
// input error before anything is simulated, not a failure in the middle.
func checkKernels(cfg *configs.Config, g workloads.GEMM, m tensorcore.Mode) error {
	s, err := baseShape(cfg, g, m)
	if err != nil {
		return err
	}
	if plans, rejected := selection.EachCandidate(cfg, s, kernel.PlanFitAs, true); len(plans) == 0 {
		return fmt.Errorf("%w (change the config or the row: kernel.candidates, "+
			"kernel.force*, shared_memory.carveout_kb, the pattern)", selection.NoKernelError(cfg, s, rejected))
	}
	return nil
}

// checkRow is the config's part: the tensor core runs the row with the
// pattern it runs with (RowPattern), whose groups K must fill.
func checkRow(cfg *configs.Config, g workloads.GEMM, sparse bool) error {
	if _, err := cfg.TensorCore.Get(g.Precision); err != nil {
		return err
	}
	if !sparse || g.Sparsity == workloads.Dense {
		return nil
	}
	pat, err := RowPattern(cfg, g)
	if err != nil {
		return err
	}
	if err := cfg.TensorCore.CheckPattern(g.Precision, pat); err != nil {
		return err
	}
	if g.K%pat.Group() != 0 {
		return fmt.Errorf("k: K=%d is not a whole number of the %d-wide "+
			"groups of sparsity %s (the pattern the row runs)", g.K, pat.Group(), pat)
	}
	return nil
}
