package smem

import (
	"fmt"

	"github.com/stcsim/stcsim/memory/memcfg"
)

// LayoutKind names a shared-memory tile layout.
type LayoutKind uint8

const (
	// Crosswise is CUTLASS's sm75/sm80 TensorOpMultiplicand layout for an
	// operand whose contiguous dimension is K (A row-major, B
	// column-major: the TN GEMM). Rows narrower than 128 B are packed
	// kFactor to a 128-B line and 16-B vectors are XOR-permuted within
	// 4x4 partitions, so that 8 rows read at the same K are
	// conflict-free.
	Crosswise LayoutKind = iota
	// Congruous is CUTLASS's TensorOpMultiplicandCongruous: the operand's
	// contiguous dimension is M or N (64 elements of 16 bits per 128-B
	// line); for 16-bit elements it is the crosswise function with a
	// 128-B crosswise, for 32-bit elements its own XOR of (c ^ 2s).
	Congruous
	// ColumnMajor is a plain pitch-linear tile with no permutation: the
	// layout of the sparse metadata E in shared memory (CUTLASS maps its
	// interleaved global layout to ColumnMajor).
	ColumnMajor
	// Unswizzled is a plain pitch-linear tile with rows of Pitch bytes:
	// the reference layout without CUTLASS's permutation (Pitch equal to
	// the row size) or with padding (Pitch larger).
	Unswizzled
)

// Layout maps a tile's elements to shared-memory byte offsets. A tile is
// pitch-linear: Contig elements along its contiguous dimension, any number
// of strided rows. Element sizes are in bits (16 for FP16/BF16, 32 for
// TF32, 8 for INT8).
type Layout struct {
	Kind     LayoutKind
	ElemBits int
	// Crosswise is the number of contiguous elements CUTLASS's swizzle
	// spans (kCrosswise); at most 128 B of elements.
	Crosswise int
	// Contig is the tile's contiguous extent in elements (the layout's
	// ldm: K per stage for a crosswise operand).
	Contig int
	// Pitch is the row pitch in bytes of Unswizzled and ColumnMajor
	// layouts (0: Contig elements, no padding).
	Pitch int
}

// AccessBytes is the 128-bit vector CUTLASS's layouts are built for.
const AccessBytes = 16

// OperandLayout is the layout CUTLASS's sm80 TN kernels give a K-major
// operand tile of contig elements of elemBits: crosswise, with a
// crosswise of min(contig, 128 B) (CUTLASS caps it at 1024 bits). A tile
// the swizzle cannot cover (a K extent that is not a power-of-two number
// of 16-B vectors, as some N:M patterns give) is left unswizzled.
func OperandLayout(elemBits, contig int) Layout {
	cw := min(contig, 1024/max(1, elemBits))
	l := Layout{Kind: Crosswise, ElemBits: elemBits, Crosswise: cw,
		Contig: contig}
	if l.Validate() != nil || cw*elemBits < 128 || cw&(cw-1) != 0 {
		return Layout{Kind: Unswizzled, ElemBits: elemBits, Contig: contig}
	}
	return l
}

// CongruousLayout is the layout CUTLASS's sm80 kernels give an operand
// tile whose contiguous dimension is M or N (A column-major, B
// row-major: ColumnMajorTensorOpMultiplicandCongruous and its row-major
// twin in default_mma_core_sm80.h), contig elements of elemBits wide. A
// tile that is not a whole number of 128-B lines along its contiguous
// dimension (the swizzle's unit) is left unswizzled.
func CongruousLayout(elemBits, contig int) Layout {
	l := Layout{Kind: Congruous, ElemBits: elemBits, Contig: contig}
	if l.Validate() != nil {
		return Layout{Kind: Unswizzled, ElemBits: elemBits, Contig: contig}
	}
	return l
}

// Unswizzled is l without CUTLASS's permutation: the same tile, rows of
// Contig elements laid end to end (what an unswizzled kernel would use;
// the reference the swizzle's bank-conflict savings are measured
// against).
func (l Layout) Unswizzled() Layout {
	return Layout{Kind: Unswizzled, ElemBits: l.ElemBits, Contig: l.Contig, Pitch: l.Pitch}
}

// Validate reports a layout the functions below cannot map.
func (l Layout) Validate() error {
	switch {
	case l.ElemBits <= 0 || 128%l.ElemBits != 0:
		return fmt.Errorf("layout: element of %d bits", l.ElemBits)
	case l.Contig <= 0:
		return fmt.Errorf("layout: contiguous extent %d", l.Contig)
	case l.Kind == Crosswise && (l.Crosswise <= 0 ||
		l.Crosswise*l.ElemBits > 1024 || l.Contig%l.Crosswise != 0 ||
		(1024/l.ElemBits)%l.Crosswise != 0):
		return fmt.Errorf("layout: crosswise %d of %d-bit elements "+
			"(contiguous %d)", l.Crosswise, l.ElemBits, l.Contig)
	case l.Kind == Congruous && l.Contig*l.ElemBits%1024 != 0:
		return fmt.Errorf("layout: congruous tile of %d %d-bit elements "+
			"is not a whole number of 128-B lines", l.Contig, l.ElemBits)
	}
	return nil
}

// Offset is the byte offset of element (contig, strided) of the tile.
func (l Layout) Offset(contig, strided int) uint64 {
	switch l.Kind {
	case Crosswise:
		return l.crosswise(contig, strided, l.Crosswise)
	case Congruous:
		if l.ElemBits == 32 {
			return l.congruous32(contig, strided)
		}
		return l.crosswise(contig, strided, 1024/l.ElemBits)
	}
	pitch := l.Pitch
	if pitch == 0 {
		pitch = l.Contig * l.ElemBits / 8
	}
	return uint64(strided*pitch + contig*l.ElemBits/8)
}

// crosswise is TensorOpMultiplicand<ElemBits, cw>::operator() of CUTLASS
// (include/cutlass/layout/tensor_op_multiplicand_sm75.h), in bytes.
func (l Layout) crosswise(contig, strided, cw int) uint64 {
	perAccess := 128 / l.ElemBits
	const tileC = 8 // 16-B vectors per 128-B line
	factor := tileC * perAccess / cw
	tileS := max(tileC/factor, 32/tileC)
	vecC := contig / perAccess
	vecS := strided / factor
	tileIdx := vecC / (tileC / factor)
	residC := vecC%(tileC/factor) + strided%factor*(tileC/factor)
	residS := vecS % tileS
	partC, partS := residC/4, residS/4
	inC, inS := residC%4, residS%4
	permC := inC ^ inS%4
	permP := partC ^ partS%2
	elemC := (tileIdx*tileC+permP*4+permC)*perAccess + contig%perAccess
	elem := elemC + vecS*l.Contig*factor
	return uint64(elem * l.ElemBits / 8)
}

// congruous32 is TensorOpMultiplicandCongruous<32, cw>::operator() (TF32).
func (l Layout) congruous32(contig, strided int) uint64 {
	tc, ts := contig/32, strided/4
	c, s := contig%32/4, strided%4
	elem := (c^(2*s))*4 + s*l.Contig + tc*32 + ts*l.Contig*4 + contig%4
	return uint64(elem * 4)
}

// perVector is the number of elements in one 16-B vector.
func (l Layout) perVector() int { return AccessBytes * 8 / l.ElemBits }

// LdsmX4Addrs are the 32 thread addresses of an ldmatrix.x4 that reads the
// four 8x8 matrices (8 rows of one 16-B vector) at rows strided0..+15 and
// vectors contig0..+1 of the tile: thread t gives row t%8 of matrix t/8,
// matrices ordered (rows 0-7, vector 0), (8-15, 0), (0-7, 1), (8-15, 1):
// the A fragment of HMMA.16816 (and two n8 B fragments).
func (l Layout) LdsmX4Addrs(strided0, contig0 int) []uint64 {
	addrs := make([]uint64, 32)
	for t := range addrs {
		j, i := t/8, t%8
		addrs[t] = l.Offset(contig0+j/2*l.perVector(), strided0+j%2*8+i)
	}
	return addrs
}

// LdsmX4AlongK are the addresses of an ldmatrix.x4 that reads 8 rows at
// four consecutive 16-B vectors (a 32-element K slice of 16-bit B for
// HMMA.SP.16832, or A values of a 64-wide K tile).
func (l Layout) LdsmX4AlongK(strided0, contig0 int) []uint64 {
	addrs := make([]uint64, 32)
	for t := range addrs {
		j, i := t/8, t%8
		addrs[t] = l.Offset(contig0+j*l.perVector(), strided0+i)
	}
	return addrs
}

// VectorAddrs are the shared-memory addresses of the 16-B vectors of one
// tile row's byte range [from, to) (rounded to whole vectors): the stores
// of a cp.async chunk, or a contiguous LDSM/LDS of the metadata.
func (l Layout) VectorAddrs(strided, from, to int) []uint64 {
	var addrs []uint64
	for b := from / AccessBytes * AccessBytes; b < to; b += AccessBytes {
		addrs = append(addrs, l.Offset(b*8/l.ElemBits, strided))
	}
	return addrs
}

// FragmentPattern is the shared-memory side of a warp loading rows
// [0, rows) x contiguous elements [0, contig) of a tile with ldmatrix:
// the fragment is cut into 8x8 matrices (8 rows of one 16-B vector), four
// to an LDSM.x4, and each matrix is one phase of 8 thread addresses whose
// bank conflicts set its wavefronts. The pattern is the whole fragment
// as one access (BytesPerInstr is its size); rows and contig are rounded
// up to whole matrices.
func FragmentPattern(name string, l Layout, rows, contig int,
	cfg memcfg.SharedMemoryConfig) Pattern {
	vecs := (contig + l.perVector() - 1) / l.perVector()
	waves, mats := 0, 0
	addrs := make([]uint64, 8)
	for r0 := 0; r0 < rows; r0 += 8 {
		for v := 0; v < vecs; v++ {
			for i := range addrs {
				addrs[i] = l.Offset(v*l.perVector(), r0+i)
			}
			waves += phaseWavefronts(addrs, AccessBytes, cfg)
			mats++
		}
	}
	return Pattern{Name: name, BytesPerInstr: mats * 8 * AccessBytes,
		Wavefronts: waves}
}

// ScalarFragmentPattern is the shared-memory side of a warp loading rows
// [0, rows) of K x outer elements [0, outer) of an M- or N-major tile of
// 32-bit elements with LDS.32, as CUTLASS's warp iterator for
// TensorOpMultiplicandCongruous<32, 32> does (ldmatrix.trans transposes
// 16-bit elements only): each instruction gives thread t the element at
// outer index t/4, K index t%4 of an 8 x 4 block (an m16n8k8 TF32
// fragment register), one phase of 32 4-byte addresses. The pattern is
// the whole fragment as one access; rows and outer are rounded up to
// whole blocks.
func ScalarFragmentPattern(name string, l Layout, rows, outer int,
	cfg memcfg.SharedMemoryConfig) Pattern {
	waves, instrs := 0, 0
	addrs := make([]uint64, 32)
	for k0 := 0; k0 < rows; k0 += 4 {
		for o0 := 0; o0 < outer; o0 += 8 {
			for t := range addrs {
				addrs[t] = l.Offset(o0+t/4, k0+t%4)
			}
			waves += Wavefronts(addrs, 4, cfg)
			instrs++
		}
	}
	return Pattern{Name: name, BytesPerInstr: instrs * 32 * 4, Wavefronts: waves}
}
