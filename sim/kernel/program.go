package kernel

import "github.com/stcsim/stcsim/sim/internal/isa"

// chunkBytes is what one warp-wide 16-byte-per-thread memory instruction
// moves: LDGSTS.128, LDSM.x4, STS.128, LDS.128, STG.128.
const ChunkBytes = 512

// progGen builds the instruction stream of one warp of a plan, in the
// order CUTLASS's sm80 multistage mainloops issue it
// (include/cutlass/gemm/threadblock/mma_multistage.h for dense,
// mma_sparse_multistage.h for sparse): the prologue copies stages-1
// stages, each closed by LDGDEPBAR, waits (DEPBAR.LE stages-2), syncs and
// loads k-group 0's fragments; each k-step then loads the next k-group's
// fragments before the current group's MMAs, spreads the next stage's
// LDGSTS over the k-groups (dense: before the group's MMAs; sparse:
// after them) and, at the next-to-last k-group, commits the stage, waits
// for the oldest and syncs the CTA.
type progGen struct {
	p    *Plan
	warp int
	prog isa.Program
	next isa.Reg

	mI, nI, groups                 int
	aRegs, bRegs, eRegs            int // registers per A/B fragment, E per buffer
	acc                            isa.Reg
	bufA, bufB, bufE               [2]isa.Reg
	ptrA, ptrB, ptrE, ptrS, loopPr isa.Reg
	gather                         isa.Reg                  // V:N:M: (index, address) per B copy of a stage
	copies                         [isa.NumOperands][]int32 // this warp's LDGSTS chunks per stage
}

// Register counts of the fragments (32-bit registers per thread).
const AccRegsPerMMA = 4 // m16n8 FP32/INT32 accumulator: 16*8*4 B / 32 threads

func (g *progGen) alloc(n int) isa.Reg {
	r := g.next
	g.next += isa.Reg(n)
	return r
}

// buildProgram is warp w's stream for plan p (its plain epilogue, the
// CTA's last segment).
func buildProgram(p *Plan, w int) *isa.Program {
	e := p.plainEpilogue()
	return buildVariant(p, progKey{warp: w, waits: e.Waits(), source: e.Source,
		dest: e.Dest, signal: e.Signal != SignalNone, last: true})
}

// buildVariant is the stream of one program variant (progKey).
func buildVariant(p *Plan, k progKey) *isa.Program {
	g := &progGen{p: p, warp: k.warp}
	g.layout()
	g.prologue()
	g.body()
	g.epilogue(k)
	g.prog.Regs = int(g.next)
	return &g.prog
}

func (g *progGen) layout() {
	p, t := g.p, g.p.Tile
	g.mI, g.nI, g.groups = t.WarpM/p.Inst.M, t.WarpN/p.Inst.N, p.Groups
	keptK := p.Pattern.Kept(p.Inst.K)
	g.aRegs = max(1, p.Inst.M*keptK*p.ElemBytes/128)
	g.bRegs = max(1, p.Inst.K*p.Inst.N*p.ElemBytes/128)
	g.acc = g.alloc(g.mI * g.nI * AccRegsPerMMA)
	for b := 0; b < 2; b++ {
		g.bufA[b] = g.alloc(g.mI * g.aRegs)
		g.bufB[b] = g.alloc(g.nI * g.bRegs)
	}
	if p.Shape.Sparse {
		g.eRegs = max(1, CeilDiv(p.metaFragB/p.Groups, 128))
		for b := 0; b < 2; b++ {
			g.bufE[b] = g.alloc(g.eRegs)
		}
	}
	g.ptrA, g.ptrB, g.ptrE = g.alloc(2), g.alloc(2), g.alloc(2)
	g.ptrS, g.loopPr = g.alloc(1), g.alloc(1)
	g.copies[isa.OperandA] = g.warpChunks(p.AStageB)
	g.copies[isa.OperandB] = g.warpChunks(p.BStageB)
	g.copies[isa.OperandE] = g.warpChunks(p.MetaStageB)
	if p.gathers() { // an (index, address) pair per B copy of a stage
		g.gather = g.alloc(2 * max(1, len(g.copies[isa.OperandB])))
	}
}

// warpChunks are the 512-byte chunks of a stage tile this warp copies:
// CUTLASS's thread maps deal the tile's 16-byte accesses over all
// threads, so chunk j goes to warp j mod warps (warps past the tile's
// chunk count copy nothing, as the sparse kernel's metadata copy does).
func (g *progGen) warpChunks(bytes int) []int32 {
	var out []int32
	for j := g.warp; j < CeilDiv(bytes, ChunkBytes); j += g.p.Warps {
		out = append(out, int32(j))
	}
	return out
}

func (g *progGen) emit(list *[]isa.Instr, in isa.Instr) { *list = append(*list, in) }

func (g *progGen) alu(list *[]isa.Instr, r isa.Reg) {
	g.emit(list, isa.Instr{Op: isa.OpALU, Dst: isa.RegSpan{First: r, N: 1}, Src: [4]isa.RegSpan{{First: r, N: 1}}})
}

// copyChunks emits the LDGSTS of chunks [from, to) of each operand's
// per-warp list for stage (-1: the k-step's own), one address update per
// operand copied.
func (g *progGen) copyChunks(list *[]isa.Instr, stage int8, from, to int) {
	for _, op := range []isa.Operand{isa.OperandA, isa.OperandB, isa.OperandE} {
		ptr := map[isa.Operand]isa.Reg{isa.OperandA: g.ptrA, isa.OperandB: g.ptrB, isa.OperandE: g.ptrE}[op]
		cs := g.copies[op]
		n := 0
		if op == isa.OperandB && g.p.gathers() {
			g.gatherAddresses(list, from, min(to, len(cs)))
		}
		for i := from; i < min(to, len(cs)); i++ {
			src := isa.RegSpan{First: ptr, N: 2}
			if op == isa.OperandB && g.p.gathers() {
				src = isa.RegSpan{First: g.gather + isa.Reg(2*i+1), N: 1}
			}
			g.emit(list, isa.Instr{Op: isa.OpLDGSTS, Operand: op, Chunk: cs[i], Stage: stage,
				Bytes: ChunkBytes, Src: [4]isa.RegSpan{src}})
			n++
		}
		if n > 0 {
			g.alu(list, ptr)
		}
	}
}

// gatherAddresses emits what Spatha's copy of B chunks [from, to) does
// before the cp.asyncs: each chunk's column index read from shared
// memory (LDS.32 of the index words of the stage's rows), then each
// row's address computed from its index (the loads first, as the
// compiler hoists them); chunk i's copy reads address register 2i+1.
func (g *progGen) gatherAddresses(list *[]isa.Instr, from, to int) {
	for i := from; i < to; i++ {
		g.emit(list, isa.Instr{Op: isa.OpLDS, Operand: isa.OperandE, Bytes: 32 * 4,
			Dst: isa.RegSpan{First: g.gather + isa.Reg(2*i), N: 1},
			Src: [4]isa.RegSpan{{First: g.ptrS, N: 1}}})
	}
	for i := from; i < to; i++ {
		idx := g.gather + isa.Reg(2*i)
		g.emit(list, isa.Instr{Op: isa.OpALU, Dst: isa.RegSpan{First: idx + 1, N: 1},
			Src: [4]isa.RegSpan{{First: idx, N: 1}, {First: g.ptrB, N: 1}}})
	}
}

func (g *progGen) prologue() {
	list := &g.prog.Prologue
	for _, r := range []isa.Reg{g.ptrA, g.ptrB, g.ptrE, g.ptrS, g.loopPr} {
		g.alu(list, r)
	}
	for s := 0; s < g.p.Tile.Stages-1; s++ {
		g.copyChunks(list, int8(s), 0, 1<<30)
		g.emit(list, isa.Instr{Op: isa.OpLDGDEPBAR})
		g.alu(list, g.ptrA)
		g.alu(list, g.ptrB)
	}
	g.emit(list, isa.Instr{Op: isa.OpDEPBAR, N: int32(g.p.Tile.Stages - 2)})
	g.emit(list, isa.Instr{Op: isa.OpBAR})
	g.loadFragments(list, 0)
}

// loadFragments emits the LDSM of one k-group's A, B (and E) fragments
// into buffer b.
func (g *progGen) loadFragments(list *[]isa.Instr, b int) {
	src := [4]isa.RegSpan{{First: g.ptrS, N: 1}}
	if g.p.FragScalar(isa.OperandA) {
		g.scalarLoads(list, isa.OperandA, g.bufA[b], g.mI*g.aRegs)
	}
	for m := 0; m < g.mI && !g.p.FragScalar(isa.OperandA); m++ {
		g.emit(list, isa.Instr{Op: isa.OpLDSM, Operand: isa.OperandA, Bytes: int32(g.aRegs * 128),
			Dst: isa.RegSpan{First: g.bufA[b] + isa.Reg(m*g.aRegs), N: uint8(g.aRegs)}, Src: src,
			Trans: g.p.FragTrans(isa.OperandA)})
	}
	perLDSM := max(1, 4/g.bRegs) // B fragments per LDSM.x4
	if g.p.FragScalar(isa.OperandB) {
		g.scalarLoads(list, isa.OperandB, g.bufB[b], g.nI*g.bRegs)
	}
	for n := 0; n < g.nI && !g.p.FragScalar(isa.OperandB); n += perLDSM {
		k := min(perLDSM, g.nI-n)
		g.emit(list, isa.Instr{Op: isa.OpLDSM, Operand: isa.OperandB, Bytes: int32(k * g.bRegs * 128),
			Dst: isa.RegSpan{First: g.bufB[b] + isa.Reg(n*g.bRegs), N: uint8(k * g.bRegs)}, Src: src,
			Trans: g.p.FragTrans(isa.OperandB)})
	}
	if g.eRegs > 0 {
		for e := 0; e < g.eRegs; e += 4 {
			k := min(4, g.eRegs-e)
			bytes := min(g.p.metaFragB/g.p.Groups-e*128, k*128)
			g.emit(list, isa.Instr{Op: isa.OpLDSM, Operand: isa.OperandE, Bytes: int32(bytes),
				Dst: isa.RegSpan{First: g.bufE[b] + isa.Reg(e), N: uint8(k)}, Src: src})
		}
	}
}

// scalarLoads emits the LDS.32 of one k-group's fragment of op: one per
// register of the regs from first (CUTLASS's warp iterator for
// TensorOpMultiplicandCongruous<32, 32> loads element by element).
func (g *progGen) scalarLoads(list *[]isa.Instr, op isa.Operand, first isa.Reg, regs int) {
	src := [4]isa.RegSpan{{First: g.ptrS, N: 1}}
	for r := 0; r < regs; r++ {
		g.emit(list, isa.Instr{Op: isa.OpLDS, Operand: op, Bytes: int32(g.p.FragInstrBytes(op)),
			Dst: isa.RegSpan{First: first + isa.Reg(r), N: 1}, Src: src, Trans: true})
	}
}

// mmas emits one k-group's MMAs from buffer b in CUTLASS's serpentine
// order (warp/mma_tensor_op.h: rows outer, columns reversed on odd rows,
// so that consecutive MMAs share an operand).
func (g *progGen) mmas(list *[]isa.Instr, b int) {
	op := isa.OpMMA
	if g.p.Shape.Sparse {
		op = isa.OpMMASP
	}
	for m := 0; m < g.mI; m++ {
		for i := 0; i < g.nI; i++ {
			n := i
			if m%2 == 1 {
				n = g.nI - 1 - i
			}
			acc := isa.RegSpan{First: g.acc + isa.Reg((m*g.nI+n)*AccRegsPerMMA), N: AccRegsPerMMA}
			in := isa.Instr{Op: op, Dst: acc, Src: [4]isa.RegSpan{
				{First: g.bufA[b] + isa.Reg(m*g.aRegs), N: uint8(g.aRegs)},
				{First: g.bufB[b] + isa.Reg(n*g.bRegs), N: uint8(g.bRegs)}, acc}}
			if g.eRegs > 0 {
				in.Src[3] = isa.RegSpan{First: g.bufE[b] + isa.Reg(min(m, g.eRegs-1)), N: 1}
			}
			g.emit(list, in)
		}
	}
}

func (g *progGen) body() {
	list := &g.prog.Body
	G := g.groups
	per := 1
	for _, cs := range g.copies {
		per = max(per, CeilDiv(len(cs), G))
	}
	sparse := g.p.Shape.Sparse
	for k := 0; k < G; k++ {
		var pre, mma, post []isa.Instr
		g.loadFragments(&pre, (k+1)%2)
		g.alu(&pre, g.ptrS)
		if !sparse && k < G-1 {
			g.copyChunks(&pre, -1, k*per, (k+1)*per)
		}
		g.mmas(&mma, k%2)
		if sparse && k < G-1 {
			g.copyChunks(&pre, -1, k*per, (k+1)*per)
		}
		if k+2 == G || G == 1 {
			from := (k + 1) * per
			if G == 1 {
				from = 0
			}
			g.copyChunks(&pre, -1, from, 1<<30)
			post = append(post, isa.Instr{Op: isa.OpLDGDEPBAR},
				isa.Instr{Op: isa.OpDEPBAR, N: int32(g.p.Tile.Stages - 2)},
				isa.Instr{Op: isa.OpBAR})
			for _, r := range []isa.Reg{g.ptrA, g.ptrB, g.ptrS, g.loopPr} {
				g.alu(&post, r)
			}
		}
		*list = append(*list, interleave(pre, mma)...)
		*list = append(*list, post...)
	}
	g.emit(list, isa.Instr{Op: isa.OpBRA, Src: [4]isa.RegSpan{{First: g.loopPr, N: 1}}})
}

// interleave places the k-group's loads, copies and address updates
// between its MMAs, one after each MMA from the first on, as ptxas
// schedules CUTLASS's mainloop (the loads write the other fragment
// buffer, so no MMA of the group depends on them); what is left follows
// the last MMA.
func interleave(other, mmas []isa.Instr) []isa.Instr {
	out := make([]isa.Instr, 0, len(other)+len(mmas))
	i := 0
	for _, m := range mmas {
		out = append(out, m)
		if i < len(other) {
			out = append(out, other[i])
			i++
		}
	}
	return append(out, other[i:]...)
}

// epilogue emits a segment's epilogue: the flag wait, the partial sums
// added (stream-K), the tile stored (to D or a split-K plane, or as
// partial sums to the stream-K workspace), the flag signalled, and EXIT
// or, when the CTA has more segments, NEXT.
func (g *progGen) epilogue(k progKey) {
	list := &g.prog.Epilogue
	if k.waits {
		g.emit(list, isa.Instr{Op: isa.OpWAIT})
	}
	if k.source&SourcePartials != 0 {
		g.partials(list, true)
	}
	if k.dest == DestPartials {
		g.partials(list, false)
		g.emit(list, isa.Instr{Op: isa.OpBAR})
	} else {
		g.storeTile(list, k)
	}
	if k.signal {
		if g.warp == 0 {
			g.emit(list, isa.Instr{Op: isa.OpSIGNAL})
		}
		if !k.last {
			g.emit(list, isa.Instr{Op: isa.OpBAR})
		}
	}
	if k.last {
		g.emit(list, isa.Instr{Op: isa.OpEXIT})
		return
	}
	g.emit(list, isa.Instr{Op: isa.OpNEXT})
}

// partialBuffer is the chunks of partial sums a warp has in flight at
// once when it loads them (registers: 4 per chunk).
const partialBuffer = 8

// partials emits the accumulators' exchange with the stream-K workspace
// straight from and to the registers, 16 B per thread per instruction
// (CUTLASS's BlockStripedReduce, no shared-memory staging): with load,
// LDG each chunk and add it into the accumulators (FADD per register);
// without, STG each chunk.
func (g *progGen) partials(list *[]isa.Instr, load bool) {
	chunks := g.p.PartialChunks()
	accN := g.mI * g.nI * AccRegsPerMMA
	if !load {
		for j := 0; j < chunks; j++ {
			acc := g.acc + isa.Reg((4*j)%accN)
			g.emit(list, isa.Instr{Op: isa.OpSTG, Operand: isa.OperandD, Space: isa.SpacePartials,
				Chunk: int32(j), Bytes: ChunkBytes, Src: [4]isa.RegSpan{{First: acc, N: 4}}})
		}
		return
	}
	buf := g.alloc(partialBuffer * 4)
	for j0 := 0; j0 < chunks; j0 += partialBuffer {
		n := min(partialBuffer, chunks-j0)
		for j := 0; j < n; j++ {
			g.emit(list, isa.Instr{Op: isa.OpLDG, Operand: isa.OperandC, Space: isa.SpacePartials,
				Chunk: int32(j0 + j), Bytes: ChunkBytes, Dst: isa.RegSpan{First: buf + isa.Reg(4*j), N: 4}})
		}
		for j := 0; j < n; j++ {
			for r := 0; r < 4; r++ {
				acc := g.acc + isa.Reg((4*(j0+j)+r)%accN)
				g.emit(list, isa.Instr{Op: isa.OpALU, Dst: isa.RegSpan{First: acc, N: 1},
					Src: [4]isa.RegSpan{{First: acc, N: 1}, {First: buf + isa.Reg(4*j+r), N: 1}}})
			}
		}
	}
}

// EpiloguePassRows are the rows of the warp tile one iteration of
// CUTLASS's default sm80 epilogue covers (DefaultThreadMapTensorOp's
// kTensorOpRows: OutputTileIterator::kIterations = warp_m / 8).
const EpiloguePassRows = 8

// storeTile emits CUTLASS 2.x's default epilogue (epilogue/threadblock/
// epilogue.h, operator()), one iteration per 8 rows of the warp tile:
// the source (C when beta != 0, or D as the previous serial split left
// it) loaded, a barrier, the accumulators staged through shared memory
// as they are (FP32: DefaultIteratorsTensorOp's warp tile and shared
// load iterators keep ElementAccumulator, also for a half output), a
// barrier, loaded back, converted (and the source added: its load has
// had the staging to arrive) and stored row-major (STG) to D or, FP32,
// to a split-K plane. The first iteration's first barrier, right after
// the mainloop, is left out: with it the steady-state fast-forward is no
// longer exact on a periodic kernel (TestFastForwardExactWhenPeriodic: 2
// of 79 627 cycles), and without it that kernel is 22 cycles shorter.
func (g *progGen) storeTile(list *[]isa.Instr, k progKey) {
	p := g.p
	ob := p.OutBytes
	space := isa.SpaceD
	if k.dest == DestSplitK {
		ob, space = AccumulatorBytes, isa.SpaceSplitK
	}
	blockChunks := CeilDiv(p.Inst.M*p.Tile.WarpN*ob, ChunkBytes) // STG chunks of an m16 row block
	passes := max(1, p.Inst.M/EpiloguePassRows)
	if blockChunks%passes != 0 {
		passes = 1
	}
	outChunks := blockChunks / passes
	staged := CeilDiv(p.Inst.M/passes*p.Tile.WarpN*AccumulatorBytes, ChunkBytes)
	fp32 := g.alloc(staged * 4)
	out := g.alloc(outChunks * 4)
	cReg := g.alloc(outChunks * 4)
	readC := k.source&(SourceC|SourceD) != 0
	srcSpace := isa.SpaceC
	if k.source&SourceD != 0 {
		srcSpace = isa.SpaceD
	}
	for m := 0; m < g.mI; m++ {
		for h := 0; h < passes; h++ {
			first := m*blockChunks + h*outChunks
			if readC {
				for j := 0; j < outChunks; j++ {
					g.emit(list, isa.Instr{Op: isa.OpLDG, Operand: isa.OperandC, Space: srcSpace, Chunk: int32(first + j),
						Bytes: ChunkBytes, Dst: isa.RegSpan{First: cReg + isa.Reg(4*j), N: 4}})
				}
			}
			if m+h > 0 { // the first is left out (storeTile's comment)
				g.emit(list, isa.Instr{Op: isa.OpBAR})
			}
			// An 8-row pass takes two of the four accumulators of every
			// m16n8 MMA of the row block (c0, c1, then c2, c3): it
			// depends on all of the block's MMAs.
			accs := isa.RegSpan{First: g.acc + isa.Reg(m*g.nI*AccRegsPerMMA), N: uint8(min(255, g.nI*AccRegsPerMMA))}
			for j := 0; j < staged; j++ {
				g.emit(list, isa.Instr{Op: isa.OpSTS, Operand: isa.OperandD, Bytes: ChunkBytes,
					Src: [4]isa.RegSpan{accs}})
			}
			g.emit(list, isa.Instr{Op: isa.OpBAR})
			for j := 0; j < staged; j++ {
				g.emit(list, isa.Instr{Op: isa.OpLDS, Operand: isa.OperandD, Bytes: ChunkBytes,
					Dst: isa.RegSpan{First: fp32 + isa.Reg(4*j), N: 4}, Src: [4]isa.RegSpan{{First: g.ptrS, N: 1}}})
			}
			src := fp32
			if ob < AccumulatorBytes || readC {
				g.convert(list, fp32, staged*4, out, outChunks*4, cReg, readC)
				src = out
			}
			for j := 0; j < outChunks; j++ {
				g.emit(list, isa.Instr{Op: isa.OpSTG, Operand: isa.OperandD, Space: space, Chunk: int32(first + j),
					Bytes: ChunkBytes, Src: [4]isa.RegSpan{{First: src + isa.Reg(4*j), N: 4}}})
			}
		}
	}
}

// convert emits the output operator on n FP32 registers from in: one ALU
// per pair (alpha x acc, plus beta x the source's register when readC,
// converted) into the out registers (wrapping at outN).
func (g *progGen) convert(list *[]isa.Instr, in isa.Reg, n int, out isa.Reg, outN int, c isa.Reg, readC bool) {
	for j := 0; j < n/2; j++ {
		op := isa.Instr{Op: isa.OpALU, Dst: isa.RegSpan{First: out + isa.Reg(j%outN), N: 1},
			Src: [4]isa.RegSpan{{First: in + isa.Reg(2*j), N: 2}}}
		if readC {
			op.Src[1] = isa.RegSpan{First: c + isa.Reg(j%outN), N: 1}
		}
		g.emit(list, op)
	}
}
