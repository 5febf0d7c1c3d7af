// Package isa is the SASS-like warp instruction set of the simulated SM:
// opcodes, registers, instructions and one warp's program. It knows no
// plans, SMs or engines.
package isa

import "fmt"

// Opcode is the class of a SASS-like warp instruction: what pipe it goes
// to and what it waits on.
type Opcode uint8

// The instruction classes of a CUTLASS sm80 GEMM kernel.
const (
	OpMMA       Opcode = iota // HMMA.16816 / HMMA.1688.TF32 / IMMA.16832: dense tensor-core MMA
	OpMMASP                   // HMMA.SP.16832 / IMMA.SP.16864: sparse MMA with metadata operand
	OpLDSM                    // LDSM.16.M88.x (.T: Trans): ldmatrix from shared memory into registers
	OpLDS                     // LDS: shared-memory load
	OpSTS                     // STS: shared-memory store
	OpLDGSTS                  // LDGSTS (cp.async): global to shared copy of 16 B per thread
	OpLDGDEPBAR               // LDGDEPBAR (cp.async.commit_group): closes a copy group
	OpDEPBAR                  // DEPBAR.LE SB0, n (cp.async.wait_group n)
	OpBAR                     // BAR.SYNC: CTA-wide barrier
	OpALU                     // IADD3, IMAD, LOP3, ISETP, SEL, F2FP: integer/conversion pipe
	OpBRA                     // BRA: loop branch
	OpLDG                     // LDG: global load through L1 (the epilogue's C)
	OpSTG                     // STG: global store (the epilogue's D)
	OpEXIT                    // EXIT
	// OpWAIT: the CTA waits until its segment's flag in global memory
	// holds the value it waits for (thread 0 polls it with
	// ld.acquire.gpu, then the CTA syncs: CUTLASS's Semaphore::wait,
	// Barrier::wait_eq); every warp runs it, warp 0 polls.
	OpWAIT
	// OpSIGNAL: once the CTA's stores are visible, warp 0 updates the
	// segment's flag (st.release / red.release.add: Semaphore::release,
	// Barrier::arrive_inc).
	OpSIGNAL
	// OpNEXT: the branch to the CTA's next segment (a stream-K CTA's
	// next tile); the cp.async groups are drained by then.
	OpNEXT
	// OpFMA: FFMA, FADD, FMUL and HADD2.F32 (a half converted to FP32):
	// the FP32 pipe's instructions (the CUDA cores, not the tensor core),
	// as a CUDA-core GEMV's inner product runs them.
	OpFMA
	// OpSHFL: SHFL.BFLY (__shfl_xor_sync), a warp shuffle: one 32-bit
	// register exchanged among the warp's lanes through the shared-memory
	// unit's crossbar (an MIO instruction, as Nsight Compute's stall
	// reasons class it).
	OpSHFL
	NumOpcodes
)

var opNames = [NumOpcodes]string{"MMA", "MMA.SP", "LDSM", "LDS", "STS",
	"LDGSTS", "LDGDEPBAR", "DEPBAR", "BAR.SYNC", "ALU", "BRA", "LDG", "STG",
	"EXIT", "WAIT", "SIGNAL", "NEXT", "FMA", "SHFL"}

// Space is the global buffer an LDG or STG addresses.
type Space uint8

// The global buffers of a GEMM's epilogue.
const (
	SpaceD        Space = iota // D (the zero value: an STG's default)
	SpaceC                     // C
	SpaceSplitK                // the parallel split-K workspace (FP32 planes)
	SpacePartials              // the stream-K workspace of partial tiles (FP32)
	// SpaceOperand: an operand's global values, loaded into registers
	// (a CUDA-core GEMV's LDG.128 of A and of B): Operand and Chunk name
	// the 512-byte chunk of the running k-step's tile, as an LDGSTS's do.
	SpaceOperand
	// SpaceTile: the CTA's whole output tile of D (a GEMV's y, stored by
	// the threads that hold the reduced sums).
	SpaceTile
)

func (o Opcode) String() string {
	if o < NumOpcodes {
		return opNames[o]
	}
	return fmt.Sprintf("op%d", o)
}

// Reg is a warp's architectural register (per thread, 32 bits).
type Reg uint16

// RegSpan is N consecutive registers starting at First (N = 0: none).
type RegSpan struct {
	First Reg
	N     uint8
}

// Operand is what a memory instruction moves (for LDGSTS, the tile it
// copies; for LDSM, the fragment it loads).
type Operand uint8

// Operands of the GEMM.
const (
	OperandA Operand = iota // A values (compressed when sparse)
	OperandE                // A's sparsity metadata
	OperandB
	OperandC // epilogue source
	OperandD // epilogue destination
	NumOperands
)

// Instr is one warp instruction: a plain value, so that streams can come
// from a generator (program.go) or, later, from an imported trace.
type Instr struct {
	Op  Opcode
	Dst RegSpan
	// Src are the register sources; for an MMA: A, B, C (the
	// accumulator, equal to Dst) and E (metadata, sparse only).
	Src [4]RegSpan
	// Operand and Chunk locate a memory instruction's data: the operand
	// and the 512-byte chunk (one warp x 16 B) of its stage tile or
	// fragment. Stage is the cp.async stage an LDGSTS fills: >= 0 is a
	// prologue stage, -1 is "this k-step + stages - 1".
	Operand Operand
	Chunk   int32
	Stage   int8
	// Bytes a memory instruction moves for the whole warp.
	Bytes int32
	// N is DEPBAR's group count (wait until at most N groups are in
	// flight).
	N int32
	// Space is the buffer an LDG or STG addresses.
	Space Space
	// Trans marks an LDSM that transposes its 8x8 matrices
	// (ldmatrix.trans, LDSM.16.MT88): the operand's tile runs along M or
	// N in shared memory and each matrix is 8 K rows of it.
	Trans bool
}

// Program is one warp's instruction stream: a prologue, the mainloop
// body run once per k-step, and the epilogue. The body is the same for
// every k-step (registers alternate between two fragment buffers within a
// k-step, as CUTLASS's double buffering does); what a k-step's LDGSTS
// copy follows from the iteration.
type Program struct {
	Prologue []Instr
	Body     []Instr
	Epilogue []Instr
	// Regs is one past the highest register the program uses.
	Regs int
}

// Counts tallies a slice of instructions by opcode.
func Counts(in []Instr) [NumOpcodes]int {
	var c [NumOpcodes]int
	for _, i := range in {
		c[i.Op]++
	}
	return c
}
