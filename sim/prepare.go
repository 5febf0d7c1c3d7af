package sim

import (
	"fmt"
	"slices"
	"sync"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/tally"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Prepared is a job through the front door: checked once against the
// trace rules and the config, each row turned into the kernel shape it
// runs once per mode, and each distinct shape's candidates ranked once
// (selection.Rank). The work and memory estimates, the records the cache
// would not serve and the run itself all read it, so no entry point
// decides any of that again.
type Prepared struct {
	// Job is the job prepared. Its run-time fields (Progress, Observer,
	// Command, Sources, Cache, CacheSalt, PowerCappedTotals) may be set
	// before Run; its
	// Workloads and Modes are what was prepared, and Run refuses a
	// Prepared whose Workloads or Modes were changed.
	Job Job

	cfg    *configs.Config
	traces []*workloads.Trace
	modes  []tensorcore.Mode
	layers []layerJob   // every record: workload x row x mode, in order
	shapes []*shapePlan // each distinct shape once, in first-seen order
	byKey  map[kernel.Shape]*shapePlan
}

// shapePlan is one distinct kernel shape of a job and its candidates as
// kernel selection ranks them: what the estimates count and the run
// simulates.
type shapePlan struct {
	shape kernel.Shape
	plans []*kernel.Plan

	once  sync.Once
	sized sized // what the estimates count of it (size)
}

// layerJob is one record to produce: a workload GEMM in one mode, and
// the shape it runs.
type layerJob struct {
	workload string
	gemm     workloads.GEMM
	mode     tensorcore.Mode
	shape    kernel.Shape
}

// Prepare says whether the job can run on the config, before anything is
// simulated, and prepares it: every mode is known; every workload is
// valid (workloads.Trace.Validate: the rules of a trace and its rows, the
// same a trace file is parsed with); the tensor core runs every row's
// precision and, when the job runs sparse, every sparse row's pattern
// (tensorcore.Config.CheckPattern); and some kernel of the library (or
// the pinned one) runs each row in each mode, so that a config or row no
// kernel runs (a carveout of 0, a pinned tile of another precision, a
// pattern no tile offers) is an input error here, not a failure in the
// middle of a run. Every entry point (run, sweep, validate, trace check)
// comes through it and so gives the same answer and the same message.
func Prepare(cfg *configs.Config, job Job) (*Prepared, error) {
	for _, m := range job.Modes {
		if !m.Valid() {
			return nil, fmt.Errorf("unknown mode %v", m)
		}
	}
	p := &Prepared{Job: job, cfg: cfg, traces: slices.Clone(job.Workloads),
		modes: slices.Clone(job.Modes)}
	if p.Job.locked == nil {
		p.Job.locked = &lockedKernels{}
	}
	p.byKey = map[kernel.Shape]*shapePlan{}
	sparse := slices.Contains(job.Modes, tensorcore.Sparse)
	for _, w := range job.Workloads {
		if len(w.GEMMs) == 0 {
			continue
		}
		if err := w.Validate(); err != nil {
			return nil, err
		}
		for _, g := range w.GEMMs {
			if err := p.addRow(w, g, sparse); err != nil {
				return nil, fmt.Errorf("%s: %w", w.Where(g.Name), err)
			}
		}
	}
	return p, nil
}

// addRow checks one row and adds its records, one per mode, ranking the
// candidates of each shape not seen before.
func (p *Prepared) addRow(w *workloads.Trace, g workloads.GEMM, sparse bool) error {
	if err := checkRow(p.cfg, g, sparse); err != nil {
		return err
	}
	for _, m := range p.modes {
		s, err := shapeOf(p.cfg, g, m)
		if err != nil {
			return err
		}
		if p.byKey[s] == nil {
			plans, rejected := selection.Rank(p.cfg, s)
			if len(plans) == 0 {
				return fmt.Errorf("%w (change the config or the row: kernel.candidates, "+
					"kernel.force*, shared_memory.carveout_kb, the pattern)",
					selection.NoKernelError(p.cfg, s, rejected))
			}
			p.byKey[s] = &shapePlan{shape: s, plans: plans}
			p.shapes = append(p.shapes, p.byKey[s])
		}
		p.layers = append(p.layers, layerJob{workload: w.Name, gemm: g, mode: m, shape: s})
	}
	return nil
}

// Check is Prepare for callers that only need its answer (trace check,
// a sweep's points before they run).
func Check(cfg *configs.Config, job Job) error {
	_, err := Prepare(cfg, job)
	return err
}

// Run simulates every GEMM of the prepared job in every mode on the
// effective config ld (the config it was prepared with) and returns the
// per-layer results and totals.
func (p *Prepared) Run(ld *configs.Loaded) (*Report, error) {
	if ld.Config != p.cfg {
		return nil, fmt.Errorf("run: the job was prepared with another config than %s", ld.Config.Name)
	}
	if !slices.Equal(p.Job.Workloads, p.traces) || !slices.Equal(p.Job.Modes, p.modes) {
		return nil, fmt.Errorf("run: the prepared job's workloads or modes were changed after Prepare")
	}
	return newRunner(ld, p).run()
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

// shapeOf is the GEMM a record runs: the sparse variant runs the sparse
// kernel only where the layer is pruned, with its pattern (RowPattern).
// Sparse activations run as the transposed GEMM (D^T = B^T A^T: N x M,
// the activations the MMA's compressed A operand). Under dual-side
// sparsity it carries the products the dual-side MMAs make
// (kernel.DualWork, from the row's weights where it has them).
func shapeOf(cfg *configs.Config, g workloads.GEMM, mode tensorcore.Mode) (kernel.Shape, error) {
	tally.ShapesBuilt.Add(1)
	s := kernel.Shape{M: g.M, N: g.N, K: g.K, Batch: max(1, g.Batch),
		Precision: g.Precision,
		Sparse:    mode == tensorcore.Sparse && g.Sparsity != workloads.Dense}
	lay, err := kernel.ParseLayout(g.Layout)
	if err != nil {
		return s, err
	}
	s.Layout = lay
	if !s.Sparse {
		return s, nil
	}
	pat, err := RowPattern(cfg, g)
	if err != nil {
		return s, err
	}
	s.Pattern = pat
	if g.SparseOperand == workloads.OperandActivations {
		s.M, s.N = s.N, s.M
		s.Layout = s.Layout.Transposed()
	}
	s.Dual = cfg.TensorCore.DualSide
	if !s.Dual {
		return s, nil
	}
	return s, kernel.DualWork(cfg, g, &s)
}

// RowPattern is the N:M pattern a sparse row runs with: a row tagged with
// the hardware's pattern of its precision (2:4; 1:2 for tf32), as every
// built-in model, --gemm and sweep GEMM list is, runs with the config's
// tensorcore.<precision>.sparse_pattern, so one key re-prunes a whole
// network; a row naming another pattern (layer-wise N:M) or carrying a
// weight file (a real mask) keeps its own.
func RowPattern(cfg *configs.Config, g workloads.GEMM) (tensorcore.Pattern, error) {
	sp := g.Sparsity
	if sp == workloads.SparsityFor(g.Precision) && g.Weights == "" {
		prec, err := cfg.TensorCore.Get(g.Precision)
		if err != nil {
			return tensorcore.Pattern{}, err
		}
		return prec.Pattern(), nil
	}
	return tensorcore.ParsePattern(sp)
}
