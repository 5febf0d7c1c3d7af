// Package fast is the analytical tier: it times a kernel plan from the
// same plan, tensor-core datapath and memory parameters the
// instruction-level SM runs, without simulating instructions. What a
// plan asks of each structure it reads from the plan's demand model
// (sim/demand), as the pre-model does; what is its own is how those
// demands overlap across waves, prologues, epilogues and the L2's state.
package fast
