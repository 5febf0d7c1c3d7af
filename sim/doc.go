// Package sim is the simulator's run driver and public API: Job, Run and
// Check, the records (a GPU's raw result turned into results.LayerResult,
// speedups, energy savings), provenance, the work estimate and the
// microbenchmarks. The model lives below it, imports one way:
//
//	sim -> sim/selection (which kernel runs a GEMM)
//	    -> sim/gpu       (one kernel on one GPU, the in-run fast paths)
//	    -> sim/sm        (the instruction-level SM)
//	    -> sim/kernel    (what is launched: plans, CTAs, programs)
//	    -> sim/internal/isa
//
// It knows no SM internals or engines; the output contract is package
// results, which sim aliases (sim.Report, sim.LayerResult, ...).
package sim
