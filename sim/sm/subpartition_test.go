package sm

import (
	"math/rand/v2"
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
		u := sp.rf.use(tc.s)
		sp.take(10, &u)
		if got := [2]uint64{sp.rf.free[0], sp.rf.free[1]}; got != tc.wantBusy {
			t.Errorf("%s: banks held through %v, want %v", tc.name, got, tc.wantBusy)
		}
		r1 := sp.rf.use(reads(isa.RegSpan{First: 1, N: 1}))
		if got := sp.rf.freeAt(&r1); got != tc.otherBank {
			t.Errorf("%s: r1 free at %d, want %d", tc.name, got, tc.otherBank)
		}
	}
}

// TestFoldedUseMatchesRegisterWalk holds the register-file use folded
// once per instruction (rfUse) to a walk over the instruction's
// registers one by one, register r in bank r mod banks: the cycle its
// banks are free, the cycles each bank is held after it issues, and the
// bytes read and written, on random spans, bank counts and port widths.
func TestFoldedUseMatchesRegisterWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	span := func() isa.RegSpan {
		if rng.IntN(4) == 0 {
			return isa.RegSpan{}
		}
		return isa.RegSpan{First: isa.Reg(rng.IntN(200)), N: uint8(1 + rng.IntN(40))}
	}
	for trial := 0; trial < 2000; trial++ {
		banks := 1 + rng.IntN(maxRFBanks)
		bytesPerClk := 1 + rng.IntN(1024)
		var s rfSpans
		for i := range s.read {
			s.read[i] = span()
		}
		s.write = span()
		sp := &SubPartition{rf: newRegFile(banks, bytesPerClk), sm: &SM{env: &Env{Count: &Counters{}}}}
		for b := range banks {
			sp.rf.free[b] = uint64(rng.IntN(50))
		}
		// The reference: each register's bank, its free cycle, and
		// each bank's bytes moved.
		bankBytes := max(1, bytesPerClk/banks)
		var moved [maxRFBanks]int
		var wantFree uint64
		regs := 0
		for _, r := range append(s.read[:], s.write) {
			for i := 0; i < int(r.N); i++ {
				b := (int(r.First) + i) % banks
				wantFree = max(wantFree, sp.rf.free[b])
				moved[b] += regBytes
				regs++
			}
		}
		const now = 30
		want := sp.rf.free
		for b := range banks {
			if moved[b] > 0 {
				want[b] = max(want[b], now) + uint64((moved[b]+bankBytes-1)/bankBytes) - 1
			}
		}
		u := sp.rf.use(s)
		if got := sp.rf.freeAt(&u); got != wantFree {
			t.Fatalf("trial %d (%d banks, spans %v): free at %d, want %d", trial, banks, s, got, wantFree)
		}
		sp.take(now, &u)
		if sp.rf.free != want {
			t.Fatalf("trial %d (%d banks, spans %v): banks held through %v, want %v", trial, banks, s, sp.rf.free[:banks], want[:banks])
		}
		n := sp.sm.env.Count
		if got := (n.RFRead + n.RFWrite) / regBytes; got != uint64(regs) {
			t.Fatalf("trial %d: %d registers moved, want %d", trial, got, regs)
		}
		if got := n.RFWrite / regBytes; got != uint64(s.write.N) {
			t.Fatalf("trial %d: %d registers written, want %d", trial, got, s.write.N)
		}
	}
}
