package memory

import "testing"

// smem is the shared memory of the a100-40gb config.
func smem() SharedMemoryConfig {
	cfg, err := LoadConfig("a100-40gb")
	if err != nil {
		panic(err)
	}
	return cfg.SharedMemory
}

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
		{"ldmatrix swizzled", LdMatrixAddrs(128, 0, true), 16, 4},
		{"ldmatrix unswizzled 128 B rows: 8-way", LdMatrixAddrs(128, 0, false), 16, 32},
		{"ldmatrix unswizzled, rows padded to 80 B: conflict-free", LdMatrixAddrs(80, 0, false), 16, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := PatternFromAddrs(tc.name, tc.addrs, tc.width, smem())
			if p.Wavefronts != tc.want {
				t.Errorf("%d wavefronts, want %d", p.Wavefronts, tc.want)
			}
		})
	}
	if p := PatternFromAddrs("x", LdMatrixAddrs(128, 3, true), 16, smem()); p != (Pattern{"x", 512, 4}) {
		t.Errorf("swizzled ldmatrix at column 3: %+v", p)
	}
	if LdMatrix.Wavefronts != 4 || CpAsyncStore.Wavefronts != 4 || LDS32.Wavefronts != 1 {
		t.Error("named patterns are not conflict-free")
	}
}

func TestSharedMemoryAccess(t *testing.T) {
	s := NewSharedMemory(smem())
	conflicted := PatternFromAddrs("unswizzled", LdMatrixAddrs(128, 0, false), 16, smem())
	tests := []struct {
		now   uint64
		p     Pattern
		bytes int
		want  uint64
	}{
		{0, LdMatrix, 4096, 32 + 23},            // 8 instr x 4 wavefronts
		{0, LDS32, 256, 32 + 2 + 23},            // queued behind the first
		{1000, conflicted, 512, 1000 + 32 + 23}, // 8-way conflicts
		{2000, CpAsyncStore, 0, 2000 + 23},
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
