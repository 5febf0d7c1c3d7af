package workloads

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/tensorcore"
)

// GEMM is one GEMM of a workload: D = A x B (+ C), with A the M x K operand
// that may be 2:4-sparse along K (a layer's weights), B the K x N
// activations.
type GEMM struct {
	Name      string               `json:"name"`
	M         int                  `json:"m"`
	N         int                  `json:"n"`
	K         int                  `json:"k"`
	Precision tensorcore.Precision `json:"precision"`
	// Sparsity is the N:M pattern of the sparse operand in the sparse
	// variant of the network ("2:4", "1:2", "2:8", ...: any N:M with
	// 0 < N < M <= 64), or "dense" (stays dense, e.g. attention GEMMs).
	Sparsity string `json:"sparsity"`
	// SparseOperand is which operand the pattern prunes: "weights" (A, the
	// default when empty) or "activations" (B, run as the transposed GEMM
	// D^T = B^T A^T so the sparse operand is the MMA's A, as libraries do
	// for 2:4 activations).
	SparseOperand string `json:"sparse_operand,omitempty"`
	// Layout is the operands' memory layouts in CUTLASS profiler naming
	// (nn, nt, tn, tt: A's letter, then B's; n column-major, t
	// row-major); empty is LayoutDefault. See Layouts.
	Layout string `json:"layout,omitempty"`
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
	// UnpaddedM and UnpaddedK are the layer's own M and K when M and K were
	// padded up for the sparse kernel (see Pad); 0 when not padded.
	UnpaddedM int `json:"unpadded_m,omitempty"`
	UnpaddedK int `json:"unpadded_k,omitempty"`
}

// Trace is a workload: an ordered list of GEMMs.
type Trace struct {
	Name  string `json:"name"`
	GEMMs []GEMM `json:"gemms"`
	// Lines says where a trace file's rows are, so that a row the
	// simulator refuses (a pattern no datapath runs) is named by its line;
	// nil for built-in models and generated traces.
	Lines *RowLines `json:"-"`
}

// RowLines are the lines of a trace file's rows, by layer name.
type RowLines struct {
	File string
	Line map[string]int
}

// Where names a row of the trace in an error: FILE:LINE and the layer
// for a trace file, the workload and the layer otherwise.
func (t *Trace) Where(layer string) string {
	if t.Lines != nil {
		if n, ok := t.Lines.Line[layer]; ok {
			return fmt.Sprintf("%s:%d: layer %s", t.Lines.File, n, layer)
		}
	}
	return fmt.Sprintf("workload %s layer %s", t.Name, layer)
}

// WithGEMMs is the trace with other rows, keeping its name and lines.
func (t *Trace) WithGEMMs(gemms []GEMM) *Trace {
	return &Trace{Name: t.Name, GEMMs: gemms, Lines: t.Lines}
}

// Sparsity values a trace row may carry.
const (
	Sparse24 = "2:4"
	Sparse12 = "1:2"
	Dense    = "dense"
)

// The ASP rule (NVIDIA apex.contrib.sparsity): a Linear or Conv weight is
// pruned only when its output count is a multiple of ASPOutMultiple and its
// input count (in_features, or input channels C) a multiple of
// ASPInMultiple. Other layers stay dense in the sparse network.
const (
	ASPOutMultiple = 8
	ASPInMultiple  = 16
)

// ASPEligible reports whether a layer with out outputs and in inputs
// (channels for a convolution) is pruned under the ASP rule.
func ASPEligible(out, in int) bool {
	return out > 0 && in > 0 && out%ASPOutMultiple == 0 &&
		in%ASPInMultiple == 0
}

// MACs is the multiply-accumulate count of one run of the GEMM as it will
// execute (padded shape): M x N x K x Batch.
func (g GEMM) MACs() int64 {
	return mulSat(int64(g.M), int64(g.N), int64(g.K), int64(max(g.Batch, 1)))
}

// mulSat multiplies non-negative factors, saturating at math.MaxInt64 so
// that a product of unchecked dimensions cannot wrap around.
func mulSat(f ...int64) int64 {
	p := int64(1)
	for _, x := range f {
		if x <= 0 {
			return 0
		}
		if p > math.MaxInt64/x {
			return math.MaxInt64
		}
		p *= x
	}
	return p
}

// addSat adds non-negative terms, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// UsefulMACs is MACs on the layer's own (unpadded) shape.
func (g GEMM) UsefulMACs() int64 {
	m, k := g.M, g.K
	if g.UnpaddedM > 0 {
		m = g.UnpaddedM
	}
	if g.UnpaddedK > 0 {
		k = g.UnpaddedK
	}
	return mulSat(int64(m), int64(g.N), int64(k), int64(max(g.Batch, 1)))
}

// SparseApplied reports whether the GEMM runs sparse in the sparse variant
// of the network: its Sparsity is not "dense", K is a whole number of
// pattern groups, and M % minOut == 0 and K % minIn == 0 (a min <= 0 skips
// that check). Callers applying the ASP rule to a GEMM pass
// ASPOutMultiple, ASPInMultiple; generated rows already encode the rule in
// Sparsity (it is decided on the layer's channels, not on K).
func (g GEMM) SparseApplied(minOut, minIn int) bool {
	group := PatternGroup(g.Sparsity)
	if group == 0 || g.K%group != 0 {
		return false
	}
	if minOut > 0 && g.M%minOut != 0 {
		return false
	}
	if minIn > 0 && g.K%minIn != 0 {
		return false
	}
	return true
}

// Operand layouts a trace row may name, in CUTLASS profiler naming: the
// first letter is A's layout, the second B's; n is column-major, t
// row-major. With A the M x K operand and B the K x N one, t for A and n
// for B keep K contiguous.
const (
	LayoutNN = "nn"
	LayoutNT = "nt"
	LayoutTN = "tn"
	LayoutTT = "tt"
	// LayoutDefault is what a PyTorch nn.Linear gives, y = x W^T with
	// row-major x [tokens, in] and W [out, in], run as D = W x^T (M =
	// out, N = tokens, K = in): A = W is row-major (t) and B = x^T is
	// x read column-major (n). Convolutions in channels-last (NHWC
	// activations, KRSC weights) give the same: C, the fastest index of
	// both, is the fastest of K.
	LayoutDefault = LayoutTN
)

// Layouts lists the layouts a row may name.
func Layouts() []string { return []string{LayoutNN, LayoutNT, LayoutTN, LayoutTT} }

// RowLayout is the layout the row runs with (LayoutDefault when it names
// none).
func (g GEMM) RowLayout() string {
	if g.Layout == "" {
		return LayoutDefault
	}
	return g.Layout
}

// Sparse operands a trace row may name.
const (
	OperandWeights     = "weights"
	OperandActivations = "activations"
)

// PatternGroup is the group width M along K of an N:M sparsity value (4
// for "2:4", 2 for "1:2", 8 for "2:8"), or 0 for "dense" and values that
// are not a pattern.
func PatternGroup(sparsity string) int {
	p, err := tensorcore.ParsePattern(sparsity)
	if err != nil {
		return 0
	}
	return p.M
}

// MACs is the total multiply-accumulate count of one pass of the
// workload as it executes: the sum of MACs x Count.
func (t *Trace) MACs() int64 {
	var s int64
	for _, g := range t.GEMMs {
		s = addSat(s, mulSat(g.MACs(), int64(g.Count)))
	}
	return s
}

// UsefulMACs is MACs without the padding.
func (t *Trace) UsefulMACs() int64 {
	var s int64
	for _, g := range t.GEMMs {
		s = addSat(s, mulSat(g.UsefulMACs(), int64(g.Count)))
	}
	return s
}

// ParseGEMM reads an "MxNxK" shape, as given to --gemm.
func ParseGEMM(s string) (m, n, k int, err error) {
	parts := strings.Split(s, "x")
	if len(parts) != 3 {
		return 0, 0, 0, fmt.Errorf("bad GEMM shape %s: want MxNxK, "+
			"like 4096x4096x4096", quote.Q(s))
	}
	var v [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("bad GEMM shape %s: %s %s is "+
				"not a whole number", quote.Q(s), dimName[i], quote.Q(p))
		}
		if x <= 0 {
			return 0, 0, 0, fmt.Errorf("bad GEMM shape %s: %s must be "+
				"> 0, got %d", quote.Q(s), dimName[i], x)
		}
		if x > MaxDim {
			return 0, 0, 0, fmt.Errorf("bad GEMM shape %s: %s %d is "+
				"above the limit %d", quote.Q(s), dimName[i], x, MaxDim)
		}
		v[i] = x
	}
	return v[0], v[1], v[2], nil
}

var dimName = [3]string{"M", "N", "K"}

// MaxDim bounds every GEMM dimension, count and batch; a row's MACs x
// Count is further bounded by MaxMACs and a workload's sum by
// MaxTraceMACs, so sums stay far from int64 overflow. Every entry point
// (trace files, --gemm, sweep gemms: lists, models, validation points)
// checks its rows with GEMM.Validate and Trace.Validate.
const (
	MaxDim       = 1 << 30
	MaxMACs      = 1 << 56
	MaxTraceMACs = 1 << 60
)
