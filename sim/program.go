package sim

// chunkBytes is what one warp-wide 16-byte-per-thread memory instruction
// moves: LDGSTS.128, LDSM.x4, STS.128, LDS.128, STG.128.
const chunkBytes = 512

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
	p    *kernelPlan
	warp int
	prog Program
	next Reg

	mI, nI, groups                 int
	aRegs, bRegs, eRegs            int // registers per A/B fragment, E per buffer
	acc                            Reg
	bufA, bufB, bufE               [2]Reg
	ptrA, ptrB, ptrE, ptrS, loopPr Reg
	copies                         [numOperands][]int32 // this warp's LDGSTS chunks per stage
}

// Register counts of the fragments (32-bit registers per thread).
const accRegsPerMMA = 4 // m16n8 FP32/INT32 accumulator: 16*8*4 B / 32 threads

func (g *progGen) alloc(n int) Reg {
	r := g.next
	g.next += Reg(n)
	return r
}

// buildProgram is warp w's stream for plan p.
func buildProgram(p *kernelPlan, w int) *Program {
	g := &progGen{p: p, warp: w}
	g.layout()
	g.prologue()
	g.body()
	g.epilogue()
	g.prog.Regs = int(g.next)
	return &g.prog
}

func (g *progGen) layout() {
	p, t := g.p, g.p.tile
	g.mI, g.nI, g.groups = t.WarpM/p.inst.M, t.WarpN/p.inst.N, p.groups
	keptK := p.inst.K * p.pattern.N / p.pattern.M
	g.aRegs = max(1, p.inst.M*keptK*p.elemBytes/128)
	g.bRegs = max(1, p.inst.K*p.inst.N*p.elemBytes/128)
	g.acc = g.alloc(g.mI * g.nI * accRegsPerMMA)
	for b := 0; b < 2; b++ {
		g.bufA[b] = g.alloc(g.mI * g.aRegs)
		g.bufB[b] = g.alloc(g.nI * g.bRegs)
	}
	if p.shape.Sparse {
		g.eRegs = max(1, ceilDiv(p.metaFragB/p.groups, 128))
		for b := 0; b < 2; b++ {
			g.bufE[b] = g.alloc(g.eRegs)
		}
	}
	g.ptrA, g.ptrB, g.ptrE = g.alloc(2), g.alloc(2), g.alloc(2)
	g.ptrS, g.loopPr = g.alloc(1), g.alloc(1)
	g.copies[OperandA] = g.warpChunks(p.aStageB)
	g.copies[OperandB] = g.warpChunks(p.bStageB)
	g.copies[OperandE] = g.warpChunks(p.metaStageB)
}

// warpChunks are the 512-byte chunks of a stage tile this warp copies:
// CUTLASS's thread maps deal the tile's 16-byte accesses over all
// threads, so chunk j goes to warp j mod warps (warps past the tile's
// chunk count copy nothing, as the sparse kernel's metadata copy does).
func (g *progGen) warpChunks(bytes int) []int32 {
	var out []int32
	for j := g.warp; j < ceilDiv(bytes, chunkBytes); j += g.p.warps {
		out = append(out, int32(j))
	}
	return out
}

func (g *progGen) emit(list *[]Instr, in Instr) { *list = append(*list, in) }

func (g *progGen) alu(list *[]Instr, r Reg) {
	g.emit(list, Instr{Op: OpALU, Dst: RegSpan{r, 1}, Src: [4]RegSpan{{r, 1}}})
}

// copyChunks emits the LDGSTS of chunks [from, to) of each operand's
// per-warp list for stage (-1: the k-step's own), one address update per
// operand copied.
func (g *progGen) copyChunks(list *[]Instr, stage int8, from, to int) {
	for _, op := range []Operand{OperandA, OperandB, OperandE} {
		ptr := map[Operand]Reg{OperandA: g.ptrA, OperandB: g.ptrB, OperandE: g.ptrE}[op]
		cs := g.copies[op]
		n := 0
		for i := from; i < min(to, len(cs)); i++ {
			g.emit(list, Instr{Op: OpLDGSTS, Operand: op, Chunk: cs[i], Stage: stage,
				Bytes: chunkBytes, Src: [4]RegSpan{{ptr, 2}}})
			n++
		}
		if n > 0 {
			g.alu(list, ptr)
		}
	}
}

func (g *progGen) prologue() {
	list := &g.prog.Prologue
	for _, r := range []Reg{g.ptrA, g.ptrB, g.ptrE, g.ptrS, g.loopPr} {
		g.alu(list, r)
	}
	for s := 0; s < g.p.tile.Stages-1; s++ {
		g.copyChunks(list, int8(s), 0, 1<<30)
		g.emit(list, Instr{Op: OpLDGDEPBAR})
		g.alu(list, g.ptrA)
		g.alu(list, g.ptrB)
	}
	g.emit(list, Instr{Op: OpDEPBAR, N: int32(g.p.tile.Stages - 2)})
	g.emit(list, Instr{Op: OpBAR})
	g.loadFragments(list, 0)
}

// loadFragments emits the LDSM of one k-group's A, B (and E) fragments
// into buffer b.
func (g *progGen) loadFragments(list *[]Instr, b int) {
	src := [4]RegSpan{{g.ptrS, 1}}
	for m := 0; m < g.mI; m++ {
		g.emit(list, Instr{Op: OpLDSM, Operand: OperandA, Bytes: int32(g.aRegs * 128),
			Dst: RegSpan{g.bufA[b] + Reg(m*g.aRegs), uint8(g.aRegs)}, Src: src})
	}
	perLDSM := max(1, 4/g.bRegs) // B fragments per LDSM.x4
	for n := 0; n < g.nI; n += perLDSM {
		k := min(perLDSM, g.nI-n)
		g.emit(list, Instr{Op: OpLDSM, Operand: OperandB, Bytes: int32(k * g.bRegs * 128),
			Dst: RegSpan{g.bufB[b] + Reg(n*g.bRegs), uint8(k * g.bRegs)}, Src: src})
	}
	if g.eRegs > 0 {
		for e := 0; e < g.eRegs; e += 4 {
			k := min(4, g.eRegs-e)
			bytes := min(g.p.metaFragB/g.p.groups-e*128, k*128)
			g.emit(list, Instr{Op: OpLDSM, Operand: OperandE, Bytes: int32(bytes),
				Dst: RegSpan{g.bufE[b] + Reg(e), uint8(k)}, Src: src})
		}
	}
}

// mmas emits one k-group's MMAs from buffer b in CUTLASS's serpentine
// order (warp/mma_tensor_op.h: rows outer, columns reversed on odd rows,
// so that consecutive MMAs share an operand).
func (g *progGen) mmas(list *[]Instr, b int) {
	op := OpMMA
	if g.p.shape.Sparse {
		op = OpMMASP
	}
	for m := 0; m < g.mI; m++ {
		for i := 0; i < g.nI; i++ {
			n := i
			if m%2 == 1 {
				n = g.nI - 1 - i
			}
			acc := RegSpan{g.acc + Reg((m*g.nI+n)*accRegsPerMMA), accRegsPerMMA}
			in := Instr{Op: op, Dst: acc, Src: [4]RegSpan{
				{g.bufA[b] + Reg(m*g.aRegs), uint8(g.aRegs)},
				{g.bufB[b] + Reg(n*g.bRegs), uint8(g.bRegs)}, acc}}
			if g.eRegs > 0 {
				in.Src[3] = RegSpan{g.bufE[b] + Reg(min(m, g.eRegs-1)), 1}
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
		per = max(per, ceilDiv(len(cs), G))
	}
	sparse := g.p.shape.Sparse
	for k := 0; k < G; k++ {
		var pre, mma, post []Instr
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
			post = append(post, Instr{Op: OpLDGDEPBAR},
				Instr{Op: OpDEPBAR, N: int32(g.p.tile.Stages - 2)},
				Instr{Op: OpBAR})
			for _, r := range []Reg{g.ptrA, g.ptrB, g.ptrS, g.loopPr} {
				g.alu(&post, r)
			}
		}
		*list = append(*list, interleave(pre, mma)...)
		*list = append(*list, post...)
	}
	g.emit(list, Instr{Op: OpBRA, Src: [4]RegSpan{{g.loopPr, 1}}})
}

// interleave places the k-group's loads, copies and address updates
// between its MMAs, one after each MMA from the first on, as ptxas
// schedules CUTLASS's mainloop (the loads write the other fragment
// buffer, so no MMA of the group depends on them); what is left follows
// the last MMA.
func interleave(other, mmas []Instr) []Instr {
	out := make([]Instr, 0, len(other)+len(mmas))
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

// epilogue emits CUTLASS's default epilogue, one m16 row block of the
// warp tile per iteration: C loaded when beta != 0, accumulators
// converted to the output type, staged through shared memory (STS, BAR,
// LDS) and stored row-major (STG).
func (g *progGen) epilogue() {
	list := &g.prog.Epilogue
	p := g.p
	ob := p.outBytes
	if p.splitK > 1 {
		ob = accumulatorBytes
	}
	rowBlock := p.inst.M * p.tile.WarpN * ob
	chunks := ceilDiv(rowBlock, chunkBytes)
	tmp := g.alloc(chunks * 4)
	cReg := g.alloc(chunks * 4)
	readC := p.splitK == 1 && p.beta != 0
	for m := 0; m < g.mI; m++ {
		accs := RegSpan{g.acc + Reg(m*g.nI*accRegsPerMMA), uint8(min(255, g.nI*accRegsPerMMA))}
		if readC {
			for j := 0; j < chunks; j++ {
				g.emit(list, Instr{Op: OpLDG, Operand: OperandC, Chunk: int32(m*chunks + j),
					Bytes: chunkBytes, Dst: RegSpan{cReg + Reg(4*j), 4}})
			}
		}
		src := accs
		if ob < accumulatorBytes || readC {
			for j := 0; j < g.nI*accRegsPerMMA/2; j++ {
				in := Instr{Op: OpALU, Dst: RegSpan{tmp + Reg(j%(chunks*4)), 1},
					Src: [4]RegSpan{{accs.First + Reg(2*j), 2}}}
				if readC {
					in.Src[1] = RegSpan{cReg + Reg(j%(chunks*4)), 1}
				}
				g.emit(list, in)
			}
			src = RegSpan{tmp, uint8(chunks * 4)}
		}
		for j := 0; j < chunks; j++ {
			g.emit(list, Instr{Op: OpSTS, Operand: OperandD, Bytes: chunkBytes,
				Src: [4]RegSpan{src}})
		}
		g.emit(list, Instr{Op: OpBAR})
		for j := 0; j < chunks; j++ {
			g.emit(list, Instr{Op: OpLDS, Operand: OperandD, Bytes: chunkBytes,
				Dst: RegSpan{tmp + Reg(4*j), 4}, Src: [4]RegSpan{{g.ptrS, 1}}})
		}
		for j := 0; j < chunks; j++ {
			g.emit(list, Instr{Op: OpSTG, Operand: OperandD, Chunk: int32(m*chunks + j),
				Bytes: chunkBytes, Src: [4]RegSpan{{tmp + Reg(4*j), 4}}})
		}
		g.emit(list, Instr{Op: OpBAR})
	}
	g.emit(list, Instr{Op: OpEXIT})
}
