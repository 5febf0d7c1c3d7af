package kernel

import "fmt"

// Layout is the global-memory layout of a GEMM's operands, as CUTLASS's
// profiler names it (tn, nt, nn, tt: A's letter, then B's; n column-major,
// t row-major). The zero value is tn: A row-major and B column-major, both
// K-contiguous, which the kernels were first built for.
type Layout struct {
	// ColumnA: A (M x K) is column-major, M contiguous.
	ColumnA bool
	// RowB: B (K x N) is row-major, N contiguous.
	RowB bool
}

// ParseLayout reads a layout name (empty: tn).
func ParseLayout(s string) (Layout, error) {
	if s == "" {
		return Layout{}, nil
	}
	if len(s) != 2 || (s[0] != 'n' && s[0] != 't') || (s[1] != 'n' && s[1] != 't') {
		return Layout{}, fmt.Errorf("unknown layout %q (want nn, nt, tn or tt)", s)
	}
	return Layout{ColumnA: s[0] == 'n', RowB: s[1] == 't'}, nil
}

func (l Layout) String() string {
	a, b := "t", "n"
	if l.ColumnA {
		a = "n"
	}
	if l.RowB {
		b = "t"
	}
	return a + b
}

// Transposed is the layout of the transposed GEMM D^T = B^T A^T: its A is
// B^T, the same bytes read as an N x K matrix (row-major exactly when B
// is column-major: K contiguous either way), and its B is A^T.
func (l Layout) Transposed() Layout {
	return Layout{ColumnA: l.RowB, RowB: l.ColumnA}
}

// KMajorA reports whether A's tile rows run along K (t): the crosswise
// operand; otherwise along M (congruous).
func (l Layout) KMajorA() bool { return !l.ColumnA }

// KMajorB reports whether B's tile rows run along K (n).
func (l Layout) KMajorB() bool { return !l.RowB }
