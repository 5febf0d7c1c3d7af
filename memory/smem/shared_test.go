package smem

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory/memcfg"
	"math/rand"
	"testing"
)

// smem is the shared memory of the a100-40gb config.
func smem() memcfg.SharedMemoryConfig {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		panic(err)
	}
	return ld.Config.Memory.SharedMemory
}

// fp16 tiles of a TN GEMM: rows are M (or N), K is contiguous.
var (
	cw64  = OperandLayout(16, 64) // 128-B rows, kFactor 1
	cw32  = OperandLayout(16, 32) // 64-B rows, two to a 128-B line
	raw64 = Layout{Kind: Unswizzled, ElemBits: 16, Contig: 64}
	raw32 = Layout{Kind: Unswizzled, ElemBits: 16, Contig: 32}
	pad64 = Layout{Kind: Unswizzled, ElemBits: 16, Contig: 64, Pitch: 144}
)

// TestPatternWavefronts checks wavefront counts against cases derived by
// hand from the bank geometry (32 banks of 4 B; a 16-B-per-thread access
// is served in 4 phases of 8 threads; an 8x8 ldmatrix matrix is one
// phase of 8 row addresses):
//   - 8 rows of a 128-B-pitch tile at the same 16-B vector all hit banks
//     0-3: 8 wavefronts per matrix, 32 per ldmatrix.x4;
//   - with a 64-B pitch, rows pair up on 2 bank groups: 4 per matrix, 16;
//   - a 144-B pitch (one vector of padding) puts the 8 rows on 8 bank
//     groups: conflict-free, 4;
//   - CUTLASS's crosswise swizzle permutes the 16-B vectors of each
//     128-B line by the row: conflict-free, 4, at every K offset.
func TestPatternWavefronts(t *testing.T) {
	seq := make([]uint64, 32)
	strided := make([]uint64, 32)
	bcast := make([]uint64, 32)
	for i := range seq {
		seq[i] = uint64(4 * i)
		strided[i] = uint64(128 * i)
	}
	tests := []struct {
		name  string
		addrs []uint64
		width int
		want  int
	}{
		{"lds32 consecutive", seq, 4, 1},
		{"lds32 stride 128 B: 32-way", strided, 4, 32},
		{"lds32 broadcast", bcast, 4, 1},
		{"ldsm.x4 unswizzled 64-wide fp16: 8-way", raw64.LdsmX4Addrs(0, 0), 16, 32},
		{"ldsm.x4 unswizzled 32-wide fp16: 4-way", raw32.LdsmX4Addrs(0, 0), 16, 16},
		{"ldsm.x4 padded to 144 B: conflict-free", pad64.LdsmX4Addrs(0, 0), 16, 4},
		{"ldsm.x4 crosswise 64", cw64.LdsmX4Addrs(0, 0), 16, 4},
		{"ldsm.x4 crosswise 64 at k 48, row 16", cw64.LdsmX4Addrs(16, 48), 16, 4},
		{"ldsm.x4 crosswise 32", cw32.LdsmX4Addrs(0, 0), 16, 4},
		{"ldsm.x4 crosswise 32 along K", cw32.LdsmX4AlongK(8, 0), 16, 4},
		{"ldsm.x4 unswizzled along K: 8 rows x 4 vectors", raw64.LdsmX4AlongK(0, 0), 16, 32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := PatternFromAddrs(tc.name, tc.addrs, tc.width, smem())
			if p.Wavefronts != tc.want {
				t.Errorf("%d wavefronts, want %d", p.Wavefronts, tc.want)
			}
		})
	}
}

// TestFragmentPattern: a 64x64 warp tile of a 64-wide fp16 operand is
// 8 row groups x 8 vectors = 64 matrices (16 ldmatrix.x4, 8 KiB): 64
// wavefronts swizzled, 8 times that unswizzled.
func TestFragmentPattern(t *testing.T) {
	for _, tc := range []struct {
		l    Layout
		want int
	}{{cw64, 64}, {raw64, 512}, {pad64, 64}} {
		p := FragmentPattern("f", tc.l, 64, 64, smem())
		if p.BytesPerInstr != 8192 || p.Wavefronts != tc.want {
			t.Errorf("%+v: %+v, want 8192 B in %d wavefronts", tc.l, p, tc.want)
		}
	}
}

// TestLayoutsArePermutations: every layout maps a tile's 16-B vectors to
// distinct, vector-aligned offsets inside the tile (CUTLASS's layouts are
// permutations of the tile's storage).
func TestLayoutsArePermutations(t *testing.T) {
	for _, l := range []Layout{cw64, cw32, OperandLayout(16, 128),
		OperandLayout(8, 128), OperandLayout(8, 64), OperandLayout(32, 32),
		OperandLayout(32, 16), {Kind: Congruous, ElemBits: 16, Contig: 128},
		{Kind: Congruous, ElemBits: 32, Contig: 64}, raw64} {
		if err := l.Validate(); err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		const rows = 64
		size := uint64(rows * l.Contig * l.ElemBits / 8)
		seen := map[uint64]bool{}
		for r := 0; r < rows; r++ {
			for c := 0; c < l.Contig; c += l.perVector() {
				o := l.Offset(c, r)
				if o%AccessBytes != 0 || o >= size || seen[o] {
					t.Fatalf("%+v: (%d,%d) -> %d (size %d, dup %v)", l, c, r,
						o, size, seen[o])
				}
				seen[o] = true
			}
		}
	}
}

// TestSharedMemoryAccess: one wavefront per cycle at 128 B/clk, then the
// latency; a second access queues behind the first.
func TestSharedMemoryAccess(t *testing.T) {
	s := NewSharedMemory(smem())
	x4 := PatternFromAddrs("x4", cw64.LdsmX4Addrs(0, 0), 16, smem())
	conflicted := PatternFromAddrs("raw", raw64.LdsmX4Addrs(0, 0), 16, smem())
	lds := PatternFromAddrs("lds", []uint64{0, 4, 8, 12, 16, 20, 24, 28, 32,
		36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 92, 96, 100,
		104, 108, 112, 116, 120, 124}, 4, smem())
	tests := []struct {
		now   uint64
		p     Pattern
		bytes int
		want  uint64
	}{
		{0, x4, 4096, 32 + 23},                  // 8 instr x 4 wavefronts
		{0, lds, 256, 32 + 2 + 23},              // queued behind the first
		{1000, conflicted, 512, 1000 + 32 + 23}, // 8-way conflicts
		{2000, x4, 0, 2000 + 23},
	}
	for i, tc := range tests {
		if got := s.Access(tc.now, tc.p, tc.bytes); got != tc.want {
			t.Errorf("access %d: done %d, want %d", i, got, tc.want)
		}
	}
	st := s.Stats()
	if st.Bytes != 4096+256+512 || st.Wavefronts != 32+2+32 ||
		st.BusyCycles != 66 || st.Accesses != 4 {
		t.Errorf("stats %+v", st)
	}
}

// TestBankArrayWidth: a wavefront takes at least one port's cycle and as
// many cycles as its bytes need at bytes_per_clk: at 64 B/clk a full
// 128-B wavefront takes two cycles, a 64-B one (a packet) one cycle; two
// ports at 256 B/clk serve two wavefronts per cycle, and two 64-B ones
// at 128 B/clk.
func TestBankArrayWidth(t *testing.T) {
	for _, tc := range []struct {
		ports, bpc, perInstr int
		want                 uint64
	}{{1, 32, 512, 64}, {1, 64, 512, 32}, {1, 128, 512, 16}, {1, 64, 256, 16}, {1, 128, 256, 16},
		{2, 256, 512, 8}, {2, 128, 512, 16}, {2, 128, 256, 8}} {
		cfg := smem()
		cfg.BytesPerClk, cfg.Ports = tc.bpc, tc.ports
		s := NewSharedMemory(cfg)
		if got := s.Access(0, Pattern{BytesPerInstr: tc.perInstr, Wavefronts: 4},
			4*tc.perInstr) - 23; got != tc.want {
			t.Errorf("%d port(s), %d B/clk: 16 wavefronts of %d B in %d cycles, want %d", tc.ports, tc.bpc,
				tc.perInstr/4, got, tc.want)
		}
	}
}

// TestBankArrayCalendar: a fill packet booked for a later cycle keeps its
// cycle; a load issued before it takes the cycles around it.
func TestBankArrayCalendar(t *testing.T) {
	s := NewSharedMemory(smem())
	if w := s.Write(100, 64, 2); w != 102 {
		t.Fatalf("fill written at %d, want 102", w)
	}
	// 8 wavefronts from 96: 96..99, then 102..105 (100 and 101 are the
	// fill's).
	if got := s.Access(96, Pattern{BytesPerInstr: 512, Wavefronts: 4},
		1024); got != 106+23 {
		t.Errorf("load done %d, want %d", got, 106+23)
	}
	if w := s.Write(100, 64, 1); w != 107 {
		t.Errorf("second fill written at %d, want 107", w)
	}
}

// TestFillPacking: with shared_memory.fill_packing two 64-B packets of one
// wavefront each share a bank-array cycle, and a 128-B one still takes a
// whole cycle; without it each packet takes a cycle. A packet of two
// wavefronts (bank conflicts) keeps its two cycles either way.
func TestFillPacking(t *testing.T) {
	for _, packing := range []bool{false, true} {
		cfg := smem()
		cfg.FillPacking = packing
		s := NewSharedMemory(cfg)
		var last uint64
		for range 4 {
			last = s.Write(10, 64, 1)
		}
		want := uint64(14) // one cycle each: 10..13
		if packing {
			want = 12 // two a cycle: 10, 11
		}
		if last != want {
			t.Errorf("packing %v: four 64-B packets from cycle 10 written by %d, want %d", packing, last, want)
		}
		if w := s.Write(20, 128, 1); w != 21 {
			t.Errorf("packing %v: a 128-B packet at 20 written by %d, want 21", packing, w)
		}
		if w := s.Write(30, 64, 2); w != 32 {
			t.Errorf("packing %v: a 64-B packet of two wavefronts at 30 written by %d, want 32", packing, w)
		}
	}
}

// TestBankArrayNoStarvation books random loads and fills (some far in
// the future, beyond the calendar's window) and checks that every request
// is served, that no cycle serves more than the array's width, and that
// the array is work-conserving: a request finishes no later than its
// start plus all the wavefronts booked before it and its own.
func TestBankArrayNoStarvation(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	a := newBankArray(128, 1)
	var now uint64
	var booked int
	for i := 0; i < 20000; i++ {
		now += uint64(rng.Intn(3))
		a.advance(now)
		at := now
		if rng.Intn(4) == 0 {
			at += uint64(rng.Intn(3 * bankWindow))
		}
		waves := 1 + rng.Intn(8)
		end := a.book(at, waves, waves*128)
		booked += waves
		if end < at+uint64(waves) || end > at+uint64(booked) {
			t.Fatalf("request %d: %d wavefronts from %d done at %d "+
				"(%d booked so far)", i, waves, at, end, booked)
		}
	}
	for i, c := range a.cycles {
		if c.used > int32(a.capacity) {
			t.Fatalf("cycle %d over capacity: %d", a.base+uint64(i), c.used)
		}
	}
}

// TestSharedKeysLive: every timing key of shared_memory moves 8 warps'
// fragment loads of a 64-wide fp16 tile in the expected direction: a
// narrower array or a longer latency is slower; the bank geometry changes
// the conflicts the same addresses meet. 16 banks of 4 B (64 B per cycle)
// serve the swizzled tile at half the rate. The unswizzled tile's column
// is 8-way conflicted on 32 x 4 B banks; 64 banks, or 32 of 8 B, split its
// 128-B row stride over twice the banks, so it is 4-way and twice as fast
// (the swizzled tile is not: 8-B banks put its rows r and r+8 in one
// phase, 2 wavefronts per phase, and it stays at the 32 x 4 B rate).
func TestSharedKeysLive(t *testing.T) {
	run := func(cfg memcfg.SharedMemoryConfig, l Layout) uint64 {
		s := NewSharedMemory(cfg)
		frag := FragmentPattern("A", l, 64, 64, cfg)
		var done uint64
		for w := 0; w < 8; w++ {
			done = max(done, s.Access(0, frag, frag.BytesPerInstr))
		}
		return done
	}
	for _, tc := range []struct {
		key    string
		l      Layout
		set    func(*memcfg.SharedMemoryConfig)
		slower bool
	}{
		{"bytes_per_clk 64", cw64, func(c *memcfg.SharedMemoryConfig) { c.BytesPerClk = 64 }, true},
		{"latency 40", cw64, func(c *memcfg.SharedMemoryConfig) { c.Latency = 40 }, true},
		{"banks 16", cw64, func(c *memcfg.SharedMemoryConfig) { c.Banks, c.BytesPerClk = 16, 64 }, true},
		{"ports 2", cw64, func(c *memcfg.SharedMemoryConfig) { c.Ports, c.BytesPerClk = 2, 256 }, false},
		{"banks 64", raw64, func(c *memcfg.SharedMemoryConfig) { c.Banks, c.BytesPerClk = 64, 256 }, false},
		{"bank_bytes 8", raw64, func(c *memcfg.SharedMemoryConfig) { c.BankBytes, c.BytesPerClk = 8, 256 }, false},
	} {
		base := run(smem(), tc.l)
		cfg := smem()
		tc.set(&cfg)
		got := run(cfg, tc.l)
		if got == base || (got > base) != tc.slower {
			t.Errorf("%s: %d cycles, default %d (want slower: %v)", tc.key,
				got, base, tc.slower)
		}
	}
}

// TestFewerBanksNeverFaster: at the same data width, fewer or narrower
// banks serve any access in no fewer cycles (more conflicts, never less
// data per cycle).
func TestFewerBanksNeverFaster(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cycles := func(banks, bankBytes int, addrs []uint64, width int) uint64 {
		cfg := memcfg.SharedMemoryConfig{Banks: banks, BankBytes: bankBytes, Ports: 1, BytesPerClk: 32, Latency: 1}
		s := NewSharedMemory(cfg)
		return s.Access(0, PatternFromAddrs("x", addrs, width, cfg), len(addrs)*width)
	}
	for i := 0; i < 500; i++ {
		width := []int{4, 8, 16}[rng.Intn(3)]
		addrs := make([]uint64, 1+rng.Intn(32))
		for j := range addrs {
			addrs[j] = uint64(rng.Intn(4096)) / uint64(width) * uint64(width)
		}
		wide := cycles(32, 4, addrs, width)
		for _, b := range [][2]int{{8, 4}, {32, 1}, {16, 2}} {
			if got := cycles(b[0], b[1], addrs, width); got < wide {
				t.Fatalf("%v x %d B: %d banks x %d B take %d cycles, fewer than 32 x 4 B's %d",
					addrs, width, b[0], b[1], got, wide)
			}
		}
	}
}
