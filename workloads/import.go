package workloads

import "github.com/stcsim/stcsim/tensorcore"

// ImportedLayer is one GEMM of a network read from a model file (an ONNX
// graph, a profiler trace), before it becomes a trace row. The importers
// (workloads/onnx, workloads/torchprof) fill it in the orientation of the
// built-in models; Rows turns the layers into rows as the built-in
// generators do.
type ImportedLayer struct {
	Name    string
	M, N, K int
	// Batch is the batched-GEMM count (products whose both operands carry
	// it, as attention's); 0 or 1 for one GEMM.
	Batch int
	// Out and In are what the ASP rule looks at: output and input
	// channels or features of the weight.
	Out, In int
	// Prunable is false for a product of two activations (no weight).
	Prunable bool
	Note     string
	// Weights names the row's weight file (see the trace format's
	// weights column), "" for none.
	Weights string
}

// Rows turns imported layers into trace rows exactly as the built-in
// models' layers are: the ASP rule decides each row's sparsity, a pruned
// row is padded for the sparse kernel (Pad), and unless perLayer the
// identical GEMMs are merged with a count (Merge).
func Rows(ls []ImportedLayer, p tensorcore.Precision, perLayer bool) []GEMM {
	rows := make([]GEMM, len(ls))
	for i, l := range ls {
		g := layer{name: l.Name, m: l.M, n: l.N, k: l.K, batch: l.Batch,
			out: l.Out, in: l.In, prunable: l.Prunable, note: l.Note}.gemm(p)
		if g.Sparsity != Dense {
			g.Weights = l.Weights
		}
		rows[i] = g
	}
	if !perLayer {
		rows = Merge(rows)
	}
	return rows
}

// Import records how a trace was imported from a model file (an ONNX
// graph or a PyTorch profiler trace): part of its Origin.
type Import struct {
	// Format is "onnx" or "torch-profiler".
	Format string `json:"format"`
	// Importer names the importer and its version ("stcsim-onnx 1").
	Importer string `json:"importer"`
	// Inputs are the input shapes the import used (NAME=DIMS), after
	// --input and --batch.
	Inputs []string `json:"inputs,omitempty"`
	// Skipped says what was left out and why (unknown operators,
	// convolutions without stride and padding, ...).
	Skipped []string `json:"skipped,omitempty"`
}
