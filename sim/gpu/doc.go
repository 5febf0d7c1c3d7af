// Package gpu is one kernel on one simulated GPU: the builder (Build),
// the CTA dispatcher and the ensemble's jitter, the run, the L2 flush and
// the split-K reduction, the raw Result (cycles, counters, straggler,
// energy counts), the Observer of simulations, and the in-run fast paths
// as sm.Hooks: wave extrapolation (extrapolate.go), the steady-state
// fast-forward (fastforward.go) and the pruner of losing selection
// samples (prune.go). It knows no candidates, workloads, records or
// output formats.
package gpu
