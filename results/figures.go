package results

// The data of a sweep's figures: what the results store's queries return
// (sweep/store's Series and Scatter) and report draws, so the store needs
// no plotting package.

// Series is one line of a sweep plot: Y at each X (grid values as
// written; numeric when every X of every series is a number).
type Series struct {
	Label string
	X     []string
	Y     []float64
}

// ScatterPoint is one point of a scatter plot: a sweep point's X and Y metrics,
// the label naming it (its grid values) and the group it belongs to
// (drawn in one colour and shape: a workload and mode).
type ScatterPoint struct {
	Group, Label string
	X, Y         float64
}
