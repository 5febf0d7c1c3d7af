package sim

import "github.com/stcsim/stcsim/results"

// The output contract lives in package results, below the simulator, so
// that report, sweep and validation read records without importing the
// simulator. These aliases keep sim's API (sim.Report, sim.LayerResult,
// ...) for library callers.
type (
	Report      = results.Report
	LayerResult = results.LayerResult
	Explain     = results.Explain
	Candidate   = results.Candidate
	Straggler   = results.Straggler
	Power       = results.Power
	Breakdown   = results.Breakdown
	Total       = results.Total
	TotalPower  = results.TotalPower
	Provenance  = results.Provenance
	// WorkloadSource and WeightsSource are workloads.Origin and
	// workloads.WeightsSource, as results names them.
	WorkloadSource = results.WorkloadSource
	WeightsSource  = results.WeightsSource
)
