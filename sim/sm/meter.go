package sm

import "sync/atomic"

// warpStepsSimulated counts the warp k-steps (one warp's body of one
// k-step) every SM of the process has simulated: the work meter the
// work estimate is tested against and progress reports read. It is
// never read by the model, so it changes no timing.
var warpStepsSimulated atomic.Uint64

// WarpStepsSimulated is the number of warp k-steps simulated so far by
// every SM of the process (k-steps the fast-forward skips are not
// simulated and not counted).
func WarpStepsSimulated() uint64 { return warpStepsSimulated.Load() }
