// Package tally counts the simulator's work in this process: how often
// the front door's once-per-row steps run (a trace row checked against
// the trace rules, a row's kernel shape built, a shape's kernel
// candidates ranked) and the warp instructions the instruction-level SM
// issued. The steps count themselves here so that a test can hold "once
// per row" for a whole command (cmd/stcsim's run --gemm), and a benchmark
// can report the work a run did (sim's BenchmarkReferenceSuite), without
// hooks into each package; nothing else reads them.
package tally

import "sync/atomic"

// Counts of the front door's steps since the process started.
var (
	// RowsValidated counts workloads.GEMM.Validate calls.
	RowsValidated atomic.Int64
	// ShapesBuilt counts rows (in one mode) turned into a kernel shape.
	ShapesBuilt atomic.Int64
	// ShapesRanked counts selection.Rank calls: shapes whose kernel
	// candidates were ranked, wherever (the front door should be the only
	// caller on a command's path).
	ShapesRanked atomic.Int64
)

// WarpInstructions counts the warp instructions every simulated GPU of
// this process has issued, selection samples and stopped samples
// included: the simulator's work, independent of the machine's speed.
var WarpInstructions atomic.Uint64

// Snapshot is the three counts at one time.
type Snapshot struct{ Validated, Shaped, Ranked int64 }

// Now reads the counts.
func Now() Snapshot {
	return Snapshot{RowsValidated.Load(), ShapesBuilt.Load(), ShapesRanked.Load()}
}

// Since is the steps counted between s and now.
func (s Snapshot) Since() Snapshot {
	n := Now()
	return Snapshot{n.Validated - s.Validated, n.Shaped - s.Shaped, n.Ranked - s.Ranked}
}
