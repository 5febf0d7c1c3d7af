package tensorcore

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
)

// Pattern is a structured-sparsity pattern along K, of one of three
// families (docs/tensorcore.md, "Sparsity patterns"):
//
//   - N:M ("2:4"): at most N nonzeros in every M consecutive values. With
//     Transposable ("2:4T") the mask holds along rows and columns alike:
//     every M x M block is N:M in both directions.
//   - V:N:M ("64:2:8", VENOM/Spatha): every block of V rows keeps the
//     same 4 of every M columns, and each row is 2:4 within those 4, so
//     N = 2 of every M values are kept; it runs on the 2:4 mma.sp of the
//     gathered columns (Instr).
//   - hierarchical N1:M1/N2:M2 ("2:4/2:4", HighLight): of every M1
//     blocks of M2 values, N1 blocks are kept, and N2 values of each
//     kept block.
//
// It is the one owner of the pattern's rules: how many values of a
// dimension it keeps (Kept), the group a dimension must be a multiple of
// (Group), the metadata bits of its kept values (MetadataBits,
// GroupMetadataBits), the mma.sp shape it runs (Instr, SparseShape), the
// selector passes it needs (SelectorPasses), its ideal speedup (Ideal),
// its name and its parse. Every other package asks it; none computes a
// kept fraction by hand (internal/layers' test holds that).
type Pattern struct {
	// N and M: N:M's; V:N:M's; hierarchical's outer N1:M1 (blocks).
	N, M int
	// V is V:N:M's vector length (rows sharing one column selection); 0
	// for the other families.
	V int
	// InN and InM are a hierarchical pattern's inner N2:M2 (values of one
	// block); 0 for the other families.
	InN, InM int
	// Transposable: an N:M mask that holds along rows and columns.
	Transposable bool
}

// Family is a pattern's family.
type Family int

// The families of Pattern.
const (
	FamilyNM Family = iota
	FamilyVNM
	FamilyHierarchical
)

func (f Family) String() string {
	return [...]string{"N:M", "V:N:M", "hierarchical"}[f]
}

// Family is the pattern's family.
func (p Pattern) Family() Family {
	switch {
	case p.V > 0:
		return FamilyVNM
	case p.InM > 0:
		return FamilyHierarchical
	}
	return FamilyNM
}

// MaxGroup bounds an N:M or hierarchical group: a chunk wider than 64
// values is beyond any index a metadata word encodes and any selector a
// tensor core would build. MaxVectorGroup bounds V:N:M's M: Spatha keeps
// a column index in 8 bits.
const MaxGroup, MaxVectorGroup = 64, 256

// gatherWidth is the columns of every M a V:N:M block keeps: the 4 a
// 2:4 mma.sp reads.
const gatherWidth = 4

// DensePattern is the pattern of a dense operand: every value kept.
var DensePattern = Pattern{N: 1, M: 1}

func (p Pattern) String() string {
	switch p.Family() {
	case FamilyVNM:
		return fmt.Sprintf("%d:%d:%d", p.V, p.N, p.M)
	case FamilyHierarchical:
		return fmt.Sprintf("%d:%d/%d:%d", p.N, p.M, p.InN, p.InM)
	}
	if p.Transposable {
		return fmt.Sprintf("%d:%dT", p.N, p.M)
	}
	return fmt.Sprintf("%d:%d", p.N, p.M)
}

// Dense is the pattern of a dense operand (every value kept).
func (p Pattern) Dense() bool { return p.Family() == FamilyNM && p.N == p.M }

// patternSyntax names every family's form, for parse errors.
const patternSyntax = "N:M, N:MT, V:N:M or N1:M1/N2:M2, like 2:4, 2:4T, 64:2:8 or 2:4/2:4"

// ParsePattern reads a pattern in its canonical form (no sign, no
// leading zero): "2:4", "2:4T", "64:2:8" or "2:4/2:4", and checks its
// family's rules (Check).
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	body, transposable := strings.CutSuffix(s, "T")
	outer, inner, hier := strings.Cut(body, "/")
	f := strings.Split(outer, ":")
	nums := make([]int, 0, 5)
	for _, part := range f {
		v, err := strconv.Atoi(part)
		if err != nil {
			return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want %s)", quote.Q(s), patternSyntax)
		}
		nums = append(nums, v)
	}
	switch {
	case hier && len(nums) == 2 && !transposable:
		in := strings.Split(inner, ":")
		if len(in) != 2 {
			return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want %s)", quote.Q(s), patternSyntax)
		}
		var e1, e2 error
		p.InN, e1 = strconv.Atoi(in[0])
		p.InM, e2 = strconv.Atoi(in[1])
		if e1 != nil || e2 != nil || p.InM == 0 {
			return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want %s)", quote.Q(s), patternSyntax)
		}
		p.N, p.M = nums[0], nums[1]
	case !hier && len(nums) == 2:
		p.N, p.M, p.Transposable = nums[0], nums[1], transposable
	case !hier && len(nums) == 3 && !transposable:
		p.V, p.N, p.M = nums[0], nums[1], nums[2]
		if p.V == 0 {
			return Pattern{}, fmt.Errorf("bad sparsity pattern %s: V:N:M needs V > 0", quote.Q(s))
		}
	default:
		return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want %s)", quote.Q(s), patternSyntax)
	}
	if p.Family() == FamilyNM && (p.N <= 0 || p.M <= p.N) {
		return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want N:M with 0 < N < M, like 2:4)", quote.Q(s))
	}
	if err := p.Check(); err != nil {
		return Pattern{}, err
	}
	if p.String() != s {
		return Pattern{}, fmt.Errorf("bad sparsity pattern %s (want %s, written as %s)", quote.Q(s), patternSyntax, p)
	}
	return p, nil
}

// Check says whether p is a pattern a sparse operand can have, by its
// family's rules: N:M 0 < N < M <= 64; V:N:M V a multiple of 16 (the
// mma's rows), N = 2 and 4 < M <= 256 (4 of every M columns gathered,
// 2:4 within them); hierarchical 0 < N1 < M1, 0 < N2 < M2 and
// M1 x M2 <= 64.
func (p Pattern) Check() error {
	switch p.Family() {
	case FamilyVNM:
		switch {
		case p.V%16 != 0:
			return fmt.Errorf("bad sparsity pattern %s: V:N:M needs V a multiple of 16 (the mma.sp's rows), got V = %d", p, p.V)
		case p.N != 2:
			return fmt.Errorf("bad sparsity pattern %s: V:N:M needs N = 2 (2:4 within the 4 gathered columns), got N = %d", p, p.N)
		case p.M <= gatherWidth || p.M > MaxVectorGroup:
			return fmt.Errorf("bad sparsity pattern %s: V:N:M needs %d < M <= %d (4 of every M columns are gathered), got M = %d",
				p, gatherWidth, MaxVectorGroup, p.M)
		}
	case FamilyHierarchical:
		if p.N <= 0 || p.M <= p.N || p.InN <= 0 || p.InM <= p.InN || p.M*p.InM > MaxGroup {
			return fmt.Errorf("bad sparsity pattern %s (want N1:M1/N2:M2 with 0 < N1 < M1, 0 < N2 < M2 and M1 x M2 <= %d)", p, MaxGroup)
		}
	default:
		if p.N <= 0 || p.M <= p.N || p.M > MaxGroup {
			return fmt.Errorf("bad sparsity pattern %s (want N:M with 0 < N < M <= %d: a group of at most %[2]d values)", p, MaxGroup)
		}
	}
	return nil
}

// Kept is how many of x values along K the pattern keeps: x x
// KeptPerGroup / Group (x itself for the zero Pattern, which stands for
// dense).
func (p Pattern) Kept(x int) int {
	if p.M == 0 {
		return x
	}
	return x * p.KeptPerGroup() / p.Group()
}

// Group is the width along K of one group of the pattern: M (N:M,
// V:N:M), M1 x M2 (hierarchical). A sparse operand's K is a whole number
// of groups.
func (p Pattern) Group() int {
	if p.Family() == FamilyHierarchical {
		return p.M * p.InM
	}
	return p.M
}

// KeptPerGroup is the values one group keeps: N, or N1 x N2.
func (p Pattern) KeptPerGroup() int {
	if p.Family() == FamilyHierarchical {
		return p.N * p.InN
	}
	return p.N
}

// Ideal is the pattern's ideal speedup over dense, Group/KeptPerGroup:
// the values of a dense operand per kept one.
func (p Pattern) Ideal() float64 { return float64(p.Group()) / float64(p.KeptPerGroup()) }

// Instr is the N:M pattern of the mma.sp instruction the pattern runs
// on: itself for N:M and hierarchical (a datapath built for it), and for
// V:N:M the A100's own 2:4 on the gathered columns.
func (p Pattern) Instr() Pattern {
	if p.Family() == FamilyVNM {
		return Pattern{N: p.N, M: gatherWidth}
	}
	return p
}

// Gathered is the K the mma.sp instructions of a V:N:M operand of depth k
// cover: the 4 gathered columns of every M (k itself for the other
// families).
func (p Pattern) Gathered(k int) int {
	if p.Family() == FamilyVNM {
		return k * gatherWidth / p.M
	}
	return k
}

// MetadataBits is the index width of one kept value within its group
// (for V:N:M, within the 4 gathered columns; for hierarchical, within
// its block): ceil(log2 M) index bits (2 for 2:4 and 1:4, 3 for 2:8 and
// 4:8), except 1:2, whose only hardware format is tf32's (PTX ISA,
// mma.sp with .tf32): a 4-bit field naming two adjacent 16-bit halves of
// a 2:4 chunk.
func (p Pattern) MetadataBits() int {
	switch p.Family() {
	case FamilyVNM:
		return p.Instr().MetadataBits()
	case FamilyHierarchical:
		return bits.Len(uint(p.InM - 1))
	}
	if p.N == 1 && p.M == 2 {
		return 4
	}
	return bits.Len(uint(p.M - 1))
}

// GroupMetadataBits is the metadata of one group of one row that the
// tensor core reads: the kept values' indices (MetadataBits each), and
// for hierarchical the kept blocks' indices (ceil(log2 M1) each); a
// transposable pattern's datapath reads each value's row and column
// index (the what-if of docs/tensorcore.md), twice the N:M's.
func (p Pattern) GroupMetadataBits() int {
	b := p.KeptPerGroup() * p.MetadataBits()
	switch {
	case p.Family() == FamilyHierarchical:
		b += p.N * bits.Len(uint(p.M-1))
	case p.Transposable:
		b *= 2
	}
	return b
}

// MetadataBitsFor is the metadata of kept values of one row (a whole
// number of groups' worth), rounded up to a bit.
func (p Pattern) MetadataBitsFor(kept int) int {
	return (kept*p.GroupMetadataBits() + p.KeptPerGroup() - 1) / p.KeptPerGroup()
}

// ColumnIndexBits is the width of one gathered column's index of a
// V:N:M block, shared by the block's V rows: a 32-bit word, as Spatha
// stores and reads them (A_indices, uint); 0 for the other families.
func (p Pattern) ColumnIndexBits() int {
	if p.Family() == FamilyVNM {
		return 32
	}
	return 0
}

// FanIn is the candidates one kept value is chosen among: M (N:M), the
// 4 gathered columns (V:N:M), M2 within a kept block (hierarchical).
func (p Pattern) FanIn() int {
	switch p.Family() {
	case FamilyVNM:
		return gatherWidth
	case FamilyHierarchical:
		return p.InM
	}
	return p.M
}

// BlockFanIn is the candidates a hierarchical pattern's kept block is
// chosen among, M1: the block mux ahead of the selectors, which delivers
// only the kept blocks' B rows; 1 for the other families.
func (p Pattern) BlockFanIn() int {
	if p.Family() == FamilyHierarchical {
		return p.M
	}
	return 1
}

// BlockKept is how many of k values along K lie in kept blocks: k x
// N1/M1 for hierarchical, k for the other families.
func (p Pattern) BlockKept(k int) int {
	if p.Family() == FamilyHierarchical {
		return k * p.N / p.M
	}
	return k
}

// SelectorPasses is how many passes a fanIn-input selector needs to
// reach any of the pattern's candidates: ceil(FanIn / fanIn).
func (p Pattern) SelectorPasses(fanIn int) int { return (p.FanIn() + fanIn - 1) / fanIn }

// SparseShape is the mma.sp shape of the pattern for a dense shape: K
// scaled by Group/KeptPerGroup of the instruction's pattern (Instr), so
// it multiplies as many kept values as the dense one, or an error when
// that is not a whole number.
func (p Pattern) SparseShape(dense Shape) (Shape, error) {
	q := p.Instr()
	g, n := q.Group(), q.KeptPerGroup()
	if dense.K*g%n != 0 {
		return Shape{}, fmt.Errorf("pattern %s does not fit the %s "+
			"instruction: K %d x %d/%d is not a whole number", p, dense,
			dense.K, g, n)
	}
	return Shape{M: dense.M, N: dense.N, K: dense.K * g / n}, nil
}

// DualShape is the instruction shape of the dual-side mode: K scaled by
// (M/N)^2, so that two independent masks of the pattern leave, on
// average, as many products as the dense instruction has.
func (p Pattern) DualShape(dense Shape) (Shape, error) {
	if p.Family() != FamilyNM || p.Transposable {
		return Shape{}, fmt.Errorf("pattern %s: the dual-side datapath runs N:M "+
			"patterns only (both operands N:M along K)", p)
	}
	if dense.K*p.M*p.M%(p.N*p.N) != 0 {
		return Shape{}, fmt.Errorf("pattern %s does not fit the dual-side "+
			"%s instruction: K %d x (%d/%d)^2 is not a whole number", p, dense,
			dense.K, p.M, p.N)
	}
	return Shape{M: dense.M, N: dense.N, K: dense.K * p.M * p.M / (p.N * p.N)}, nil
}

// NativePattern is the pattern the A100's sparse tensor core runs for a
// precision: 1:2 for tf32 (in 32-bit values), 2:4 otherwise.
func (p Precision) NativePattern() Pattern {
	if p == TF32 {
		return Pattern{N: 1, M: 2}
	}
	return Pattern{N: 2, M: 4}
}
