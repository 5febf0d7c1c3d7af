package sm

import (
	"math/bits"

	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
)

// rfUse is an instruction's rfSpans folded over the register file's
// banks: the banks it uses, the cycles it holds each of them, and the
// registers it reads and writes. It depends only on the instruction and
// on whether its A fragment comes from the reuse cache, so the scan and
// the issue read it from a per-program table (rfTable) instead of
// walking the instruction's registers each time.
type rfUse struct {
	mask          uint32 // banks used
	reads, writes int
	hold          [maxRFBanks]uint32 // per bank: cycles held (0: unused)
}

// use folds s over rf's banks, as useRegs books them.
func (rf *regFile) use(s rfSpans) rfUse {
	var regs [maxRFBanks]int
	var u rfUse
	for _, r := range s.read {
		u.reads += rf.count(&regs, r)
	}
	u.writes = rf.count(&regs, s.write)
	for b, n := range regs[:rf.banks] {
		if n > 0 {
			u.mask |= 1 << b
			u.hold[b] = uint32(kernel.CeilDiv(n*regBytes, rf.bankBytes))
		}
	}
	return u
}

// freeAt is the first cycle every bank u uses is free (freeFor).
func (rf *regFile) freeAt(u *rfUse) uint64 {
	at := uint64(0)
	for m := u.mask; m != 0; m &= m - 1 {
		at = max(at, rf.free[bits.TrailingZeros32(m)])
	}
	return at
}

// take holds u's banks from now and counts the bytes moved (useRegs).
func (sp *SubPartition) take(now uint64, u *rfUse) {
	rf := &sp.rf
	n := sp.sm.env.Count
	n.RFRead += uint64(u.reads * regBytes)
	n.RFWrite += uint64(u.writes * regBytes)
	for m := u.mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros32(m)
		rf.free[b] = max(rf.free[b], now) + uint64(u.hold[b]) - 1
	}
}

// rfTable holds the rfUse of every instruction of one program, for one
// register-file geometry: per section (prologue, body, epilogue) and
// instruction, the use with the A fragment read and with it from the
// reuse cache (the same but for MMAs).
type rfTable struct {
	sections [3][][2]rfUse
}

func newRFTable(rf *regFile, p *isa.Program) *rfTable {
	t := &rfTable{}
	for s, list := range [3][]isa.Instr{p.Prologue, p.Body, p.Epilogue} {
		uses := make([][2]rfUse, len(list))
		for i := range list {
			uses[i] = [2]rfUse{rf.use(spansOf(&list[i], false)),
				rf.use(spansOf(&list[i], true))}
		}
		t.sections[s] = uses
	}
	return t
}

// rfTable is the table of program p on this GPU's register files, made
// the first time a warp runs p.
func (e *Env) rfTable(p *isa.Program) *rfTable {
	if t := e.rfTables[p]; t != nil {
		return t
	}
	if e.rfTables == nil {
		e.rfTables = map[*isa.Program]*rfTable{}
	}
	rf := newRegFile(e.Config.SM.RegisterFileBanks, e.Config.SM.RegisterFileBytesPerClk)
	t := newRFTable(&rf, p)
	e.rfTables[p] = t
	return t
}

// rfUse is what in, the instruction at the warp's program counter, takes
// of the register file (rfSpans, folded).
func (w *Warp) rfUse(in *isa.Instr) *rfUse {
	u := &w.rft.sections[w.section][w.pc]
	if in.Src[0] == w.lastA {
		return &u[1]
	}
	return &u[0]
}
