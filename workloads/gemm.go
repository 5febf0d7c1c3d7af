package workloads

// GEMM is one GEMM of a workload: D = A x B (+ C), with A the M x K operand
// that may be 2:4-sparse along K (a layer's weights), B the K x N
// activations.
type GEMM struct {
	Name      string `json:"name"`
	M         int    `json:"m"`
	N         int    `json:"n"`
	K         int    `json:"k"`
	Precision string `json:"precision"`
	// Sparsity is the pattern of A in the sparse variant of the network:
	// "2:4", "1:2" or "dense" (stays dense, e.g. attention GEMMs).
	Sparsity string `json:"sparsity"`
	// Count is how many times the GEMM runs per network pass.
	Count int `json:"count"`
	// Batch is the batched-GEMM count (independent GEMMs of this shape in
	// one kernel, as in attention); 1 otherwise.
	Batch int `json:"batch"`
	// Weights optionally names a file with the real weight tensor whose
	// mask and metadata the replay uses.
	Weights string `json:"weights,omitempty"`
	// Note says how the GEMM was derived (padding, orientation).
	Note string `json:"note,omitempty"`
}

// Trace is a workload: an ordered list of GEMMs.
type Trace struct {
	Name  string `json:"name"`
	GEMMs []GEMM `json:"gemms"`
}
