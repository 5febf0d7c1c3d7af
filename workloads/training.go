package workloads

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/tensorcore"
)

// Passes of a training step a run can time (--pass).
const (
	// PassForward is the forward pass alone: today's inference trace.
	PassForward = "forward"
	// PassBackward is the two backward GEMMs of every forward GEMM.
	PassBackward = "backward"
	// PassStep is a whole training step: forward and backward.
	PassStep = "step"
)

// Passes lists the values --pass takes.
func Passes() []string { return []string{PassForward, PassBackward, PassStep} }

// The roles of a training step's GEMMs (GEMM.Pass). For a forward GEMM
// D = A B (M x N = M x K . K x N), the backward pass computes the
// gradient of each operand from the output's gradient dD:
//   - RoleDgrad: dB = A^T dD, M' = K, N' = N, K' = M (a linear layer's
//     data gradient dX = W^T dY, reducing along W's output dimension);
//   - RoleWgrad: dA = dD B^T, M' = M, N' = K, K' = N (a linear layer's
//     weight gradient dW = dY X^T, reducing along the tokens).
const (
	RoleForward = "forward"
	RoleDgrad   = "dgrad"
	RoleWgrad   = "wgrad"
	// RoleOverhead marks a non-GEMM kernel of the step (the activation
	// sparsifier) in results.
	RoleOverhead = "overhead"
)

// Activation sparsity modes (--activation-sparsity): which GEMMs read a
// run-time 2:4-sparsified activation X.
const (
	// ActivationsOff: no activation is sparsified.
	ActivationsOff = "off"
	// ActivationsForward: the forward GEMM reads X sparsified along its
	// reduction (features); the sparsifier writes X's compressed form.
	ActivationsForward = "forward"
	// ActivationsStep: the forward GEMM as above and the weight
	// gradient dW = dY X^T reading X^T sparsified along the tokens; the
	// sparsifier writes both compressed forms (a mask 2:4 along both
	// dimensions of X, as xFormers' sparsify24 "transposable" tiles do).
	ActivationsStep = "step"
)

// DefaultActivationLayers matches the layers whose input the published
// 2:4 activation-sparsity training sparsifies: the FFN's second linear
// layer, reading the squared-ReLU output (Haziza et al., "Accelerating
// Transformer Inference and Training with 2:4 Activation Sparsity",
// arXiv:2503.16672): ffn2 in the built-in BERTs, down_proj and fc2 in
// imported Llama- and ViT-style graphs.
const DefaultActivationLayers = `ffn2|down_proj|fc2`

// Training says how Training turns a forward trace into a pass of a
// training step.
type Training struct {
	Pass string
	// Transposable: the weights' N:M mask holds along both dimensions
	// (tensorcore.PruneTransposable), so the data gradient, reducing
	// along W's output dimension, runs sparse too; otherwise it is dense.
	Transposable bool
	// Activations is ActivationsOff (or ""), ActivationsForward or
	// ActivationsStep; ActivationLayers picks the layers whose input X
	// is sparsified (nil: DefaultActivationLayers).
	Activations      string
	ActivationLayers *regexp.Regexp
}

// Identity reports whether the options leave a trace as it is: the
// forward pass without activation sparsity is the inference trace.
func (o Training) Identity() bool {
	return (o.Pass == "" || o.Pass == PassForward) &&
		(o.Activations == "" || o.Activations == ActivationsOff)
}

// String describes the options for provenance ("pass step,
// transposable mask, activations step (ffn2)").
func (o Training) String() string {
	parts := []string{"pass " + o.pass()}
	if o.Transposable {
		parts = append(parts, "transposable mask")
	}
	if o.activations() != ActivationsOff {
		parts = append(parts, fmt.Sprintf("activations %s (%s)", o.Activations, o.layers()))
	}
	return strings.Join(parts, ", ")
}

func (o Training) pass() string {
	if o.Pass == "" {
		return PassForward
	}
	return o.Pass
}

func (o Training) activations() string {
	if o.Activations == "" {
		return ActivationsOff
	}
	return o.Activations
}

func (o Training) layers() *regexp.Regexp {
	if o.ActivationLayers == nil {
		return regexp.MustCompile(DefaultActivationLayers)
	}
	return o.ActivationLayers
}

// OptionError is a training option the library refuses, named by its
// field (OptionPass, OptionActivations; package field); a command names
// it as its flag or key.
type OptionError = field.Error

// The fields of Training an OptionError names.
const (
	OptionPass        field.Name = "pass"
	OptionActivations field.Name = "activation_sparsity"
)

// Check reports options that are not one of the known values.
func (o Training) Check() error {
	if !slices.Contains(Passes(), o.pass()) {
		return &OptionError{Field: OptionPass, Value: fmt.Sprintf("%q", o.Pass),
			Err: fmt.Errorf("want %s", strings.Join(Passes(), ", "))}
	}
	switch o.activations() {
	case ActivationsOff, ActivationsForward, ActivationsStep:
	default:
		return &OptionError{Field: OptionActivations, Value: fmt.Sprintf("%q", o.Activations),
			Err: fmt.Errorf("want %s, %s or %s", ActivationsOff, ActivationsForward, ActivationsStep)}
	}
	return nil
}

// Sparsifier is the activation sparsifier kernel a sparse step runs before
// a GEMM that reads a sparsified X: it reads X (Rows x Cols elements,
// Batch times), keeps Pattern's largest values of every group and writes
// the compressed values and metadata, of X (along Rows, the features)
// and, when Transposed, of X^T too (along Cols, the tokens).
type Sparsifier struct {
	Name       string
	For        string // the forward GEMM it feeds
	Rows, Cols int
	Batch      int
	Precision  string
	Pattern    string
	Transposed bool
	Count      int
}

// CheckPass refuses a pass that the workload's rows cannot give: a
// PyTorch profiler trace records the GEMMs of the pass that was profiled
// (a profiled training step already holds its backward GEMMs, in rows
// that do not say which operand is the weight), so only its own pass
// runs. importFormat is the trace's import format ("" for a built-in
// model or trace file).
func (o Training) CheckPass(workload, importFormat string) error {
	if o.pass() != PassForward && importFormat == "torch-profiler" {
		return &OptionError{Field: OptionPass, Value: o.pass(), Err: fmt.Errorf("workload %s is a PyTorch "+
			"profiler trace, which holds the GEMMs of the pass that was profiled, not "+
			"the shapes of their backward GEMMs (a profiled training step already "+
			"holds them); profile the pass you want and run it as the %s pass, "+
			"or import the model's ONNX graph", workload, PassForward)}
	}
	return nil
}

// Training turns a forward trace (any trace: built-in, CSV/JSON, ONNX or
// profiler imports) into the pass o names: for every forward GEMM D = A B
// its forward row, its data gradient (dB = A^T dD) and its weight
// gradient (dA = dD B^T), each with its own M, N, K and the operand, if
// any, that is N:M along its reduction (GEMM.SparseAlong). The trace's
// rows are the GEMMs as given: a convolution's row is its implicit GEMM,
// whose backward GEMMs are the transposed products of that GEMM (the
// data gradient is W^T dY in the column form, M = C R S, N = N P Q,
// K = K_out; the col2im scatter is not timed). The sparsifier kernels,
// one per forward GEMM whose X is sparsified, are the trace's Sparsifiers.
func (t *Trace) Training(o Training) (*Trace, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Identity() {
		return t, nil
	}
	out := &Trace{Name: t.Name}
	pass := o.pass()
	for _, g := range t.GEMMs {
		if g.Pass != "" && g.Pass != RoleForward {
			return nil, fmt.Errorf("trace %s row %s is already a %s GEMM of a "+
				"training step; give the forward trace", t.Name, g.Name, g.Pass)
		}
		act := o.activations() != ActivationsOff && o.layers().MatchString(g.Name) &&
			!isProduct(g)
		f := forwardRow(g, act)
		if pass != PassBackward {
			out.GEMMs = append(out.GEMMs, f)
		}
		if pass != PassForward {
			out.GEMMs = append(out.GEMMs, dgradRow(g, o.Transposable),
				wgradRow(g, act && o.activations() == ActivationsStep))
		}
		if act && (pass != PassBackward || o.activations() == ActivationsStep) {
			out.Sparsifiers = append(out.Sparsifiers, sparsifier(g, o.activations() == ActivationsStep))
		}
	}
	if err := out.Validate(); err != nil {
		return nil, &OptionError{Field: OptionPass, Value: pass, Err: err}
	}
	return out, nil
}

// isProduct: a batched row multiplies two activations (attention's
// scores and context); its A is no weight.
func isProduct(g GEMM) bool { return g.Batch > 1 }

// operandNames are the names of a row's A and B, and of its two
// gradients' suffixes.
func operandNames(g GEMM) (a, b, dA, dB string) {
	if isProduct(g) {
		return "A", "B", "dA", "dB"
	}
	return "W", "X", "dW", "dX"
}

// forwardRow is the forward GEMM: as given, or with X sparsified (act).
func forwardRow(g GEMM, act bool) GEMM {
	f := g
	f.Name, f.Pass = g.Name+".fwd", RoleForward
	a, b, _, _ := operandNames(g)
	if act {
		f = unpad(f)
		f.Sparsity, f.SparseOperand, f.Weights = SparsityFor(g.Precision), OperandActivations, ""
		f = Pad(f)
	}
	switch {
	case f.Sparsity == Dense:
		f.SparseAlong = ""
	case f.SparseOperand == OperandActivations:
		f.SparseAlong = fmt.Sprintf("%s along K (%d)", b, ownK(f))
	default:
		f.SparseAlong = fmt.Sprintf("%s along K (%d)", a, ownK(f))
	}
	f.Note = joinNotes(fmt.Sprintf("forward D = %s %s", a, b), f.Note)
	return f
}

// dgradRow is the data gradient dB = A^T dD: A^T is N:M along its
// reduction (A's M) only with a transposable mask.
func dgradRow(g GEMM, transposable bool) GEMM {
	u := unpad(g)
	a, _, _, dB := operandNames(g)
	d := GEMM{Name: g.Name + "." + dB, M: u.K, N: u.N, K: u.M, Precision: g.Precision,
		Sparsity: Dense, Count: g.Count, Batch: g.Batch, Pass: RoleDgrad,
		Layout: gradLayout(g, flipA(g.RowLayout())+"n")}
	d.Note = fmt.Sprintf("data gradient %s = %s^T dD: M = %s's K, K = %s's M",
		dB, a, a, a)
	weightSparse := g.Sparsity != Dense && g.SparseOperand != OperandActivations &&
		!isProduct(g)
	switch {
	case weightSparse && transposable && u.M%PatternGroup(g.Sparsity) == 0:
		d.Sparsity, d.SparseOperand = g.Sparsity, OperandWeights
		d.SparseAlong = fmt.Sprintf("%s^T along K (%s's M, %d)", a, a, u.M)
		d.Note = joinNotes(d.Note, "transposable mask: a synthetic mask of the pattern")
		d = Pad(d)
	case weightSparse && transposable:
		d.Note = joinNotes(d.Note, fmt.Sprintf("dense: M %d is no whole number of %s groups",
			u.M, g.Sparsity))
	case weightSparse:
		d.Note = joinNotes(d.Note, fmt.Sprintf("dense: %s's mask is %s along its K, "+
			"not along its M (a transposable mask, --transposable, makes it sparse)",
			a, g.Sparsity))
	}
	return d
}

// wgradRow is the weight gradient dA = dD B^T: dense, unless X^T is
// sparsified along the tokens (act).
func wgradRow(g GEMM, act bool) GEMM {
	u := unpad(g)
	_, b, dA, _ := operandNames(g)
	w := GEMM{Name: g.Name + "." + dA, M: u.M, N: u.K, K: u.N, Precision: g.Precision,
		Sparsity: Dense, Count: g.Count, Batch: g.Batch, Pass: RoleWgrad,
		Layout: gradLayout(g, "n"+flipB(g.RowLayout()))}
	w.Note = fmt.Sprintf("weight gradient %s = dD %s^T: N = %s's K, K = %s's N (tokens)",
		dA, b, b, b)
	if act {
		w.Sparsity, w.SparseOperand = SparsityFor(g.Precision), OperandActivations
		w.SparseAlong = fmt.Sprintf("%s^T along K (tokens, %d)", b, u.N)
		w = Pad(w)
	}
	return w
}

// sparsifier is the kernel that sparsifies the row's X (K x N).
func sparsifier(g GEMM, both bool) Sparsifier {
	u := unpad(g)
	return Sparsifier{Name: g.Name + ".sparsify", For: g.Name + ".fwd", Rows: u.K,
		Cols: u.N, Batch: max(g.Batch, 1), Precision: g.Precision.String(),
		Pattern: SparsityFor(g.Precision), Transposed: both, Count: g.Count}
}

// gradLayout is a backward row's layout: the one its operands' bytes give,
// or tn for int8, whose sm80 kernels are tn only (the framework lays its
// int8 operands out for them, as the built-in models do).
func gradLayout(g GEMM, layout string) string {
	if g.Precision == tensorcore.INT8 {
		return LayoutDefault
	}
	return layout
}

// ownK is the row's own (unpadded) K.
func ownK(g GEMM) int {
	if g.UnpaddedK > 0 {
		return g.UnpaddedK
	}
	return g.K
}

// flipA is the layout letter of A^T read as an M x K operand: the bytes
// of A, so column-major exactly when A is row-major.
func flipA(layout string) string {
	if layout[0] == 't' {
		return "n"
	}
	return "t"
}

// flipB is the letter of B^T read as a K x N operand (N = B's K).
func flipB(layout string) string {
	if layout[1] == 'n' {
		return "t"
	}
	return "n"
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}
