// Package tally counts how often the front door's once-per-row steps
// run: a trace row checked against the trace rules, a row's kernel shape
// built, a shape's kernel candidates ranked. The steps count themselves
// here so that a test can hold "once per row" for a whole command
// (cmd/stcsim's run --gemm) without hooks into each package; nothing
// else reads them.
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
