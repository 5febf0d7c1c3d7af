package sm

import (
	"testing"

	"github.com/stcsim/stcsim/sim/internal/isa"
)

// TestRegisterFileBanks: operands in one bank take turns, operands spread
// over the banks are read in parallel; the next instruction waits only
// for the banks it uses.
func TestRegisterFileBanks(t *testing.T) {
	reads := func(spans ...isa.RegSpan) rfSpans {
		var s rfSpans
		copy(s.read[:], spans)
		return s
	}
	for _, tc := range []struct {
		name      string
		s         rfSpans
		wantBusy  [2]uint64 // each bank held through, from cycle 10
		otherBank uint64    // when an instruction reading r1 alone may issue
	}{
		// 4 registers of bank 0 at 192 B per bank: 512 B, 3 cycles.
		{"one bank", reads(isa.RegSpan{First: 0, N: 1}, isa.RegSpan{First: 2, N: 1}, isa.RegSpan{First: 4, N: 1}, isa.RegSpan{First: 6, N: 1}), [2]uint64{12, 0}, 0},
		// r0..r3: 2 per bank, 256 B each, 2 cycles on both.
		{"spread", reads(isa.RegSpan{First: 0, N: 4}), [2]uint64{11, 11}, 11},
		// An LDSM: its address register r1 read, its fragment r4..r7
		// written back: bank 1 holds 3 registers, bank 0 two.
		{"load", rfSpans{read: [4]isa.RegSpan{{First: 1, N: 1}}, write: isa.RegSpan{First: 4, N: 4}}, [2]uint64{11, 11}, 11},
	} {
		sp := &SubPartition{rf: newRegFile(2, 384), sm: &SM{env: &Env{Count: &Counters{}}}}
		sp.useRegs(10, tc.s)
		if got := [2]uint64{sp.rf.free[0], sp.rf.free[1]}; got != tc.wantBusy {
			t.Errorf("%s: banks held through %v, want %v", tc.name, got, tc.wantBusy)
		}
		if got := sp.rf.freeFor(reads(isa.RegSpan{First: 1, N: 1})); got != tc.otherBank {
			t.Errorf("%s: r1 free at %d, want %d", tc.name, got, tc.otherBank)
		}
	}
}
