package sim

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Version is the tool version recorded next to every result.
const Version = results.Version

// Job is what one simulation run covers: workloads in modes.
type Job struct {
	Workloads []*workloads.Trace
	Modes     []tensorcore.Mode
	// Progress, when set, is called as GEMM simulations finish.
	Progress func(done, total int)
	// Observer, when set, sees every simulated kernel's engine and
	// components (monitoring, tracing); simulations then run one at a
	// time.
	Observer Observer
	// Command and Sources, when set, are recorded in the report's
	// provenance: the command line and where each workload came from.
	Command []string
	Sources []WorkloadSource
	// Cache, when set, returns the records of layers simulated before
	// by the same model (CacheSalt: internal/modelid's identity of the
	// simulator's source), effective config, GEMM shape and operands, and
	// mode, and keeps the new ones; each record says "hit" or "miss".
	// Nil: everything is simulated.
	Cache     Cache
	CacheSalt string

	// PowerCappedTotals says the caller adds the power-capped totals to
	// a locked run's report (AddPowerCapped, as `run` does): the work
	// estimate counts their re-timing (selection.LockedRetimes), and a
	// kernel above power.limit_w at the locked clock is re-timed on the
	// worker that simulated it, as soon as it is, so that the re-timings
	// share the workers with the other GEMMs instead of running after them
	// all. The totals are the same.
	PowerCappedTotals bool

	// locked keeps a locked run's kernels above the power limit (set by
	// Prepare), and retime, in AddPowerCapped's runs, the ones to re-time
	// from them (capped.go).
	locked, retime *lockedKernels
}

// Observer watches kernel simulations as they are built and run (the
// GPU's; see observer.go).
type Observer = gpu.Observer

// Run simulates every GEMM of the job's workloads in every mode on the
// effective config and returns the per-layer results and totals.
// It is Prepare and Prepared.Run.
func Run(ld *configs.Loaded, job Job) (*Report, error) {
	p, err := Prepare(ld.Config, job)
	if err != nil {
		return nil, err
	}
	return p.Run(ld)
}

// SampleObserver is an Observer that also wants the kernel-selection
// samples (selection's; see select.go).
type SampleObserver = selection.SampleObserver

// SamplePrefix starts the name of every kernel-selection sample.
const SamplePrefix = selection.SamplePrefix

// The output contract lives in package results, below the simulator, so
// that report, sweep and validation read records without importing the
// simulator. These aliases keep sim's API (sim.Report, sim.LayerResult,
// ...) for library callers.
type (
	Report      = results.Report
	LayerResult = results.LayerResult
	Candidate   = results.Candidate
	Straggler   = results.Straggler
	Power       = results.Power
	Breakdown   = results.Breakdown
	Total       = results.Total
	TotalPower  = results.TotalPower
	Traffic     = results.Traffic
	Provenance  = results.Provenance
	// WorkloadSource and WeightsSource are workloads.Origin and
	// workloads.WeightsSource, as results names them.
	WorkloadSource = results.WorkloadSource
	WeightsSource  = results.WeightsSource
)

// FastTierError is the fast tier's stated error (fast.ErrorStatement) in
// words: what config show prints.
func FastTierError() string { return fast.ErrorStatement() }
