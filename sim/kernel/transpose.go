package kernel

import "github.com/stcsim/stcsim/memory"

// The V:N:M kernel reads B row-major (a gathered row of B is a
// contiguous run along N; checkGather). Spatha itself has no path for a
// column-major B: its B loader indexes B[k*N + n] (VENOM,
// include/spatha/block_sparse/spmm/blockwise_kernel.h), and VENOM's
// PyTorch layers hand it X^T made row-major by dense.contiguous()
// (end2end/bert_pytorch.py, sparse_dense_mul_dispatch), a copy kernel of
// its own launched before spatha.spmm. A plan whose B is column-major
// (layouts tn and nn) does the same: the gather kernel runs on a
// row-major copy of B, and TransposeKernel is the launch that makes it.

// Transpose-copy stream: each SM keeps transposeInFlight tiles of
// transposeChunk bytes in flight (a 64 x 32 fp16 tile staged through
// shared memory is 4 KiB), as the sparsifier's stream kernel does.
const (
	transposeChunk    = 4096
	transposeInFlight = 8
)

// transposeForGather makes a V:N:M plan on a column-major B run on its
// row-major copy (TransposeB), the layout the gather needs.
func (p *Plan) transposeForGather() {
	if p.gathers() && p.Shape.Layout.KMajorB() {
		p.Shape.Layout.RowB = true
		p.TransposeB = true
	}
}

// TransposeKernel is the copy launched before a TransposeB plan: every
// batch's K x N B read column-major and written row-major, each byte
// once each way (a tiled transpose stages a tile in shared memory so
// that both its reads and its writes are whole sectors).
func (p *Plan) TransposeKernel() memory.StreamKernel {
	g := p.Shape
	bytes := uint64(g.K) * uint64(g.N) * uint64(max(g.Batch, 1)) * uint64(p.ElemBytes)
	return memory.StreamKernel{InBytes: bytes, InClass: memory.BOperand,
		Outs:  []memory.StreamOut{{Class: memory.BOperand, Bytes: bytes}},
		Chunk: transposeChunk, InFlight: transposeInFlight}
}
