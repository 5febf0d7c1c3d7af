package tensorcore

import (
	"fmt"
	"math/bits"

	"github.com/stcsim/stcsim/internal/quote"
)

// Pattern is an N:M structured-sparsity pattern: at most N nonzeros in
// every M consecutive values along K. It is the one owner of the
// pattern's rules: how many values of a dimension it keeps (Kept), the
// group a dimension must be a multiple of (Group), the metadata bits of
// a kept value (MetadataBits), the mma.sp shape it runs (SparseShape),
// the selector passes it needs (SelectorPasses), its ideal speedup
// (Ideal), its name and its parse. Every other package asks it; none
// computes a kept fraction by hand (internal/layers' test holds that).
type Pattern struct{ N, M int }

// MaxGroup bounds M: a chunk wider than 64 values is beyond any index a
// metadata word encodes and any selector a tensor core would build.
const MaxGroup = 64

// DensePattern is the pattern of a dense operand: every value kept.
var DensePattern = Pattern{N: 1, M: 1}

func (p Pattern) String() string { return fmt.Sprintf("%d:%d", p.N, p.M) }

// Dense is the pattern of a dense operand (every value kept).
func (p Pattern) Dense() bool { return p.N == p.M }

// ParsePattern reads "2:4": N:M with 0 < N < M <= 64, in its canonical
// form (no sign, no leading zero).
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	n, err := fmt.Sscanf(s, "%d:%d", &p.N, &p.M)
	if err != nil || n != 2 || p.N <= 0 || p.M <= p.N || p.String() != s {
		return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want N:M with 0 < N < M, like 2:4)", quote.Q(s))
	}
	if err := p.Check(); err != nil {
		return Pattern{}, err
	}
	return p, nil
}

// Check says whether p is a pattern a sparse operand can have: 0 < N <
// M <= MaxGroup.
func (p Pattern) Check() error {
	if p.N <= 0 || p.M <= p.N || p.M > MaxGroup {
		return fmt.Errorf("bad sparsity pattern %s (want N:M with 0 < N < M <= %d)", p, MaxGroup)
	}
	return nil
}

// Kept is how many of x values along K the pattern keeps: x*N/M (x
// itself for the zero Pattern, which stands for dense).
func (p Pattern) Kept(x int) int {
	if p.M == 0 {
		return x
	}
	return x * p.N / p.M
}

// Group is the width along K of one group of the pattern, M: a sparse
// operand's K is a whole number of groups.
func (p Pattern) Group() int { return p.M }

// KeptPerGroup is the values one group keeps, N.
func (p Pattern) KeptPerGroup() int { return p.N }

// Ideal is the pattern's ideal speedup over dense, M/N: the values of
// a dense operand per kept one.
func (p Pattern) Ideal() float64 { return float64(p.M) / float64(p.N) }

// MetadataBits is the metadata width of one kept value: ceil(log2 M)
// index bits (2 for 2:4 and 1:4, 3 for 2:8 and 4:8), except 1:2, whose
// only hardware format is tf32's (PTX ISA, mma.sp with .tf32): a 4-bit
// field naming two adjacent 16-bit halves of a 2:4 chunk.
func (p Pattern) MetadataBits() int {
	if p == (Pattern{N: 1, M: 2}) {
		return 4
	}
	return bits.Len(uint(p.M - 1))
}

// FanIn is the candidates one kept value is chosen among, M: the
// selector fan-in that reaches any of them in one pass.
func (p Pattern) FanIn() int { return p.M }

// SelectorPasses is how many passes a fanIn-input selector needs to
// reach any of the pattern's candidates: ceil(FanIn / fanIn).
func (p Pattern) SelectorPasses(fanIn int) int { return (p.FanIn() + fanIn - 1) / fanIn }

// SparseShape is the mma.sp shape of the pattern for a dense shape: K
// scaled by M/N (so it multiplies as many kept values as the dense one),
// or an error when that is not a whole number.
func (p Pattern) SparseShape(dense Shape) (Shape, error) {
	if dense.K*p.M%p.N != 0 {
		return Shape{}, fmt.Errorf("pattern %s does not fit the %s "+
			"instruction: K %d x %d/%d is not a whole number", p, dense,
			dense.K, p.M, p.N)
	}
	return Shape{M: dense.M, N: dense.N, K: dense.K * p.M / p.N}, nil
}

// DualShape is the instruction shape of the dual-side mode: K scaled by
// (M/N)^2, so that two independent masks of the pattern leave, on
// average, as many products as the dense instruction has.
func (p Pattern) DualShape(dense Shape) (Shape, error) {
	if dense.K*p.M*p.M%(p.N*p.N) != 0 {
		return Shape{}, fmt.Errorf("pattern %s does not fit the dual-side "+
			"%s instruction: K %d x (%d/%d)^2 is not a whole number", p, dense,
			dense.K, p.M, p.N)
	}
	return Shape{M: dense.M, N: dense.N, K: dense.K * p.M * p.M / (p.N * p.N)}, nil
}
