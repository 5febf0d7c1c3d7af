// Package selection is which kernel runs a GEMM: the library's candidates
// (Candidates), the pre-model that ranks them (Estimate, a score over
// the plan's sim/demand demands, and Rank: the one ranking the work
// estimate also counts), the sampled estimates with the
// K fit (SampleEstimate, kextrapolate.go; SampledWhole is the one
// long-in-K rule), jitter ensembles, and the power-capped re-timing
// (Run, CapClock). It knows no workloads, records or output formats.
package selection
