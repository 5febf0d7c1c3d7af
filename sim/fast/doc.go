// Package fast is the analytical tier: it times a kernel plan from the
// same plan, tensor-core datapath and memory parameters the
// instruction-level SM runs, without simulating instructions.
package fast
