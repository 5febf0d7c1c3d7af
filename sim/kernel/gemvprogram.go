package kernel

import (
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// gemvGen builds one warp's stream of the CUDA-core GEMV (gemv.go) in
// the order cudaCoreGemm's unrolled loop gives it: per k-step the LDG.128
// of the CTA's 2 rows of A and of the N tokens' B (ptxas hoists the
// unrolled loop's independent loads ahead of the math), the loop's
// address and bound updates, each row's conversion to FP32, then per
// token its conversion and 2 x kStepK FFMAs (the two rows' chains
// interleaved); the epilogue's warp reduction, the cross-warp sums and
// the store of D.
type gemvGen struct {
	p    *Plan
	warp int
	prog isa.Program
	next isa.Reg

	vec, n     int // kStepK (elements of a 16-B vector), tokens
	rawA, rawB isa.Reg
	wf, af     isa.Reg // A's and one token's B converted to FP32
	acc, tmp   isa.Reg // 2N accumulators, 2N shuffle results
	ptrA, ptrB isa.Reg
	loop, sum  isa.Reg
}

func (g *gemvGen) alloc(n int) isa.Reg {
	r := g.next
	g.next += isa.Reg(n)
	return r
}

func (g *gemvGen) emit(list *[]isa.Instr, in isa.Instr) { *list = append(*list, in) }

// scalar is the one register r.
func scalar(r isa.Reg) isa.RegSpan { return isa.RegSpan{First: r, N: 1} }

// buildGEMVProgram is warp w's stream of GEMV plan p.
func buildGEMVProgram(p *Plan, w int) *isa.Program {
	g := &gemvGen{p: p, warp: w, vec: gemvVec / p.ElemBytes, n: p.Shape.N}
	regsPerVec := gemvVec / 4
	g.rawA = g.alloc(gemvRows * regsPerVec)
	g.rawB = g.alloc(g.n * regsPerVec)
	g.wf = g.alloc(gemvRows * g.vec)
	g.af = g.alloc(g.vec)
	g.acc = g.alloc(gemvRows * g.n)
	g.tmp = g.alloc(gemvRows * g.n)
	g.ptrA, g.ptrB = g.alloc(2), g.alloc(2)
	g.loop, g.sum = g.alloc(1), g.alloc(4)
	g.prologue()
	g.body()
	g.epilogue()
	g.prog.Regs = int(g.next)
	return &g.prog
}

// alu emits an integer-pipe instruction writing r from srcs.
func (g *gemvGen) alu(list *[]isa.Instr, r isa.Reg, srcs ...isa.RegSpan) {
	in := isa.Instr{Op: isa.OpALU, Dst: scalar(r)}
	copy(in.Src[:], srcs)
	g.emit(list, in)
}

// fma emits an FP32-pipe instruction writing r from srcs.
func (g *gemvGen) fma(list *[]isa.Instr, r isa.Reg, srcs ...isa.RegSpan) {
	in := isa.Instr{Op: isa.OpFMA, Dst: scalar(r)}
	copy(in.Src[:], srcs)
	g.emit(list, in)
}

// prologue sets up the thread's row and K offsets and zeroes the
// accumulators (acc[i] = 0: one instruction each).
func (g *gemvGen) prologue() {
	list := &g.prog.Prologue
	for _, r := range []isa.Reg{g.ptrA, g.ptrA + 1, g.ptrB, g.ptrB + 1, g.loop} {
		g.alu(list, r)
	}
	for i := 0; i < gemvRows*g.n; i++ {
		g.alu(list, g.acc+isa.Reg(i))
	}
}

// convert emits the conversion of the 16-B vector in raw registers to
// FP32 in dst registers: one HADD2.F32 per half (the FP32 pipe) for fp16;
// for bf16 a 16-bit shift of each register's low element (IMAD.U32 by
// 0x10000: the FP32 pipe, which executes IMAD, as Nsight Compute's fma
// pipe does) and a mask of its high one (LOP3: the integer pipe); FP32
// needs none (the FFMAs read raw's registers).
func (g *gemvGen) convert(list *[]isa.Instr, raw, dst isa.Reg) {
	per := 4 / g.p.ElemBytes // elements per 32-bit register
	for l := 0; l < g.vec && per > 1; l++ {
		src := scalar(raw + isa.Reg(l/per))
		if g.p.Shape.Precision == tensorcore.BF16 && l%2 == 1 {
			g.alu(list, dst+isa.Reg(l), src)
			continue
		}
		g.fma(list, dst+isa.Reg(l), src)
	}
}

// vecReg is where element l of the FP32 vector of a raw 16-B vector is
// (conv when converted, the raw register itself for FP32).
func (g *gemvGen) vecReg(raw, conv isa.Reg, l int) isa.Reg {
	if g.p.ElemBytes == 4 {
		return raw + isa.Reg(l)
	}
	return conv + isa.Reg(l)
}

func (g *gemvGen) body() {
	list := &g.prog.Body
	for r := 0; r < gemvRows; r++ {
		g.emit(list, isa.Instr{Op: isa.OpLDG, Space: isa.SpaceOperand, Operand: isa.OperandA,
			Chunk: int32(r*gemvWarps + g.warp), Bytes: ChunkBytes,
			Dst: isa.RegSpan{First: g.rawA + isa.Reg(4*r), N: 4}, Src: [4]isa.RegSpan{{First: g.ptrA, N: 2}}})
	}
	for n := 0; n < g.n; n++ {
		g.emit(list, isa.Instr{Op: isa.OpLDG, Space: isa.SpaceOperand, Operand: isa.OperandB,
			Chunk: int32(n*gemvWarps + g.warp), Bytes: ChunkBytes,
			Dst: isa.RegSpan{First: g.rawB + isa.Reg(4*n), N: 4}, Src: [4]isa.RegSpan{{First: g.ptrB, N: 2}}})
	}
	// idxK += kTileK: both pointers advance, the bound is tested.
	g.alu(list, g.ptrA, scalar(g.ptrA))
	g.alu(list, g.ptrB, scalar(g.ptrB))
	g.alu(list, g.loop, scalar(g.loop))
	for r := 0; r < gemvRows; r++ {
		g.convert(list, g.rawA+isa.Reg(4*r), g.wf+isa.Reg(r*g.vec))
	}
	for n := 0; n < g.n; n++ {
		raw := g.rawB + isa.Reg(4*n)
		g.convert(list, raw, g.af)
		for l := 0; l < g.vec; l++ {
			for r := 0; r < gemvRows; r++ {
				acc := g.acc + isa.Reg(n*gemvRows+r)
				g.fma(list, acc, scalar(g.vecReg(raw, g.af, l)),
					scalar(g.vecReg(g.rawA+isa.Reg(4*r), g.wf+isa.Reg(r*g.vec), l)), scalar(acc))
			}
		}
	}
	g.emit(list, isa.Instr{Op: isa.OpBRA, Src: [4]isa.RegSpan{scalar(g.loop)}})
}

// epilogue reduces each of the 2N sums over the warp (cub::WarpReduce:
// a SHFL.BFLY and an FADD per level, the sums' levels interleaved), has
// lane 0 store them to shared memory (one STS each), syncs, and on warp 0
// has threads 0..2N-1 add the warps' sums (LDS and FADD per warp), scale
// by alpha (FMUL), convert (F2F) and store D (one STG of the CTA's
// tile).
func (g *gemvGen) epilogue() {
	list := &g.prog.Epilogue
	outs := gemvRows * g.n
	for level := 0; level < gemvShflLevels; level++ {
		for o := 0; o < outs; o++ {
			g.emit(list, isa.Instr{Op: isa.OpSHFL, Dst: scalar(g.tmp + isa.Reg(o)),
				Src: [4]isa.RegSpan{scalar(g.acc + isa.Reg(o))}})
		}
		for o := 0; o < outs; o++ {
			acc := g.acc + isa.Reg(o)
			g.fma(list, acc, scalar(acc), scalar(g.tmp+isa.Reg(o)))
		}
	}
	for o := 0; o < outs; o++ {
		g.emit(list, isa.Instr{Op: isa.OpSTS, Operand: isa.OperandD, Bytes: 4,
			Src: [4]isa.RegSpan{scalar(g.acc + isa.Reg(o))}})
	}
	g.emit(list, isa.Instr{Op: isa.OpBAR})
	if g.warp == 0 {
		for w := 0; w < gemvWarps; w++ {
			g.emit(list, isa.Instr{Op: isa.OpLDS, Operand: isa.OperandD, Bytes: int32(outs * 4),
				Dst: scalar(g.sum + isa.Reg(w)), Src: [4]isa.RegSpan{scalar(g.ptrB)}})
		}
		for w := 1; w < gemvWarps; w++ {
			g.fma(list, g.sum, scalar(g.sum), scalar(g.sum+isa.Reg(w)))
		}
		g.fma(list, g.sum, scalar(g.sum))
		if g.p.OutBytes < 4 {
			g.alu(list, g.sum, scalar(g.sum))
		}
		g.emit(list, isa.Instr{Op: isa.OpSTG, Operand: isa.OperandD, Space: isa.SpaceTile,
			Bytes: int32(outs * g.p.OutBytes), Src: [4]isa.RegSpan{scalar(g.sum)}})
	}
	g.emit(list, isa.Instr{Op: isa.OpEXIT})
}
