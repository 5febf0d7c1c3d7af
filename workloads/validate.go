package workloads

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/internal/tally"
	"github.com/stcsim/stcsim/tensorcore"
)

// ParseError is a bad trace file or row: it names the file, the 1-based
// line and column where the problem is, and the field.
type ParseError struct {
	File   string
	Line   int
	Column int
	// Field is the CSV column or JSON key at fault; empty for errors of
	// the file's structure.
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	pos := fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	if e.Field == "" {
		return pos + ": " + e.Err.Error()
	}
	return pos + ": " + e.Field + ": " + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// fieldError is a bad value of one field, before its position is known.
type fieldError struct {
	field string
	err   error
}

func badField(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, err: fmt.Errorf(format, args...)}
}

// Validate checks one row; the error names the field at fault.
func (g *GEMM) Validate() error {
	tally.RowsValidated.Add(1)
	if fe := g.check(); fe != nil {
		return fmt.Errorf("%s: %w", fe.field, fe.err)
	}
	return nil
}

// check validates a row and says which field is wrong.
func (g *GEMM) check() *fieldError {
	if g.Name == "" {
		return badField("name", "must not be empty")
	}
	if g.Name[0] == '#' {
		return badField("name", "must not start with '#' (the CSV comment marker)")
	}
	for _, f := range []struct{ field, v string }{{"name", g.Name},
		{"weights", g.Weights}, {"note", g.Note}} {
		if quote.HasControl(f.v) {
			return badField(f.field, "control character or invalid UTF-8 in %s", quote.Q(f.v))
		}
	}
	for _, d := range []struct {
		field string
		v     int
	}{{"m", g.M}, {"n", g.N}, {"k", g.K}, {"count", g.Count},
		{"batch", g.Batch}} {
		if d.v <= 0 || d.v > MaxDim {
			return badField(d.field, "must be in 1..%d, got %d", MaxDim, d.v)
		}
	}
	if !g.Precision.Valid() {
		return badField("precision", "unknown precision %v", g.Precision)
	}
	if g.Sparsity != Dense && PatternGroup(g.Sparsity) == 0 {
		return badField("sparsity", "unknown sparsity %s (want %s, or an "+
			"N:M pattern with 0 < N < M <= 64 such as %s, %s, 1:4 or 2:8)",
			quote.Q(g.Sparsity), Dense, Sparse24, Sparse12)
	}
	if g.SparseOperand != "" && g.SparseOperand != OperandWeights &&
		g.SparseOperand != OperandActivations {
		return badField("sparse_operand", "unknown sparse operand %s (want "+
			"%s or %s)", quote.Q(g.SparseOperand), OperandWeights, OperandActivations)
	}
	if fe := g.checkLayout(); fe != nil {
		return fe
	}
	if fe := g.checkGroups(); fe != nil {
		return fe
	}
	if fe := checkUnpadded("unpadded_m", g.UnpaddedM, g.M); fe != nil {
		return fe
	}
	if fe := checkUnpadded("unpadded_k", g.UnpaddedK, g.K); fe != nil {
		return fe
	}
	total := new(big.Int).SetInt64(int64(g.M))
	for _, v := range []int{g.N, g.K, g.Batch, g.Count} {
		total.Mul(total, big.NewInt(int64(v)))
	}
	if total.Cmp(big.NewInt(MaxMACs)) > 0 {
		return badField("count", "m x n x k x batch x count = %s MACs is "+
			"above the limit %d", total, int64(MaxMACs))
	}
	return nil
}

// checkLayout: the layout is one of Layouts, and one CUTLASS ships for
// the row's precision. Its sm80 INT8 tensor-op kernels, dense (16832) and
// sparse (16864), come in tn only (python/cutlass_library/generator.py:
// GenerateSM80_TensorOp_16832_TN, GenerateSM80_SparseTensorOp_16864_TN):
// ldmatrix.trans transposes 16-bit elements, so an 8-bit operand that is
// not K-contiguous cannot be loaded into an IMMA fragment that way.
func (g *GEMM) checkLayout() *fieldError {
	if g.Layout == "" {
		return nil
	}
	if !slices.Contains(Layouts(), g.Layout) {
		return badField("layout", "unknown layout %s (want one of %s: A's "+
			"then B's layout, n column-major, t row-major)", quote.Q(g.Layout),
			strings.Join(Layouts(), ", "))
	}
	if g.Precision == tensorcore.INT8 && g.Layout != LayoutTN {
		return badField("layout", "layout %s at int8: CUTLASS's sm80 int8 "+
			"tensor-op kernels (dense and sparse) are tn only", g.Layout)
	}
	return nil
}

// checkGroups: a sparse row's K must be a whole number of its pattern's
// groups, as the compressed operand (kept values + indices per group) and
// mma.sp need. Rows are never padded silently: Pad does it, and says so.
func (g *GEMM) checkGroups() *fieldError {
	group := PatternGroup(g.Sparsity)
	if group == 0 || g.K%group == 0 {
		return nil
	}
	return badField("k", "K=%d is not a whole number of the %d-wide groups "+
		"of sparsity %s (pad K to %d, or make the row dense)", g.K, group,
		g.Sparsity, roundUp(g.K, group))
}

func checkUnpadded(field string, v, padded int) *fieldError {
	if v < 0 || v > padded {
		return badField(field, "must be 0 (not padded) or in 1..%d, got %d",
			padded, v)
	}
	return nil
}

// Validate checks every row of the trace.
func (t *Trace) Validate() error {
	if len(t.GEMMs) == 0 {
		return fmt.Errorf("trace %s has no GEMMs", t.Name)
	}
	first := map[string]int{}
	for i := range t.GEMMs {
		if err := t.GEMMs[i].Validate(); err != nil {
			return fmt.Errorf("trace %s GEMM %d (%s): %w", t.Name, i+1,
				t.GEMMs[i].Name, err)
		}
		n := t.GEMMs[i].Name
		if j, dup := first[n]; dup {
			return fmt.Errorf("trace %s GEMM %d: name: %w", t.Name, i+1,
				duplicateName(n, fmt.Sprintf("GEMM %d", j+1)))
		}
		first[n] = i
	}
	if m := t.MACs(); m > MaxTraceMACs {
		return fmt.Errorf("trace %s: its GEMMs sum to %d MACs (or more), "+
			"above the limit %d for one workload", t.Name, m, int64(MaxTraceMACs))
	}
	return nil
}

// duplicateName is the error of a layer name given twice in one trace:
// results pair each layer's dense and sparse runs by name.
func duplicateName(name, first string) error {
	return fmt.Errorf("layer name %s is already used by %s; names must be "+
		"unique in a trace (results pair dense and sparse runs by name)",
		quote.Q(name), first)
}
