package memory

// Pattern is how one warp-wide shared-memory instruction uses the banks:
// the bytes it moves and the wavefronts (bank-array cycles) it takes.
type Pattern struct {
	Name          string
	BytesPerInstr int
	Wavefronts    int
}

// Conflict-free patterns of the kernels we model. A wavefront moves at
// most banks x bank_bytes (128 B on Ampere); 16-byte-per-thread accesses
// are served in 4 phases of 8 threads.
var (
	// LdMatrix is ldmatrix.x4 of a CUTLASS-swizzled tile: 32 rows of
	// 16 B, conflict-free, 4 wavefronts.
	LdMatrix = Pattern{Name: "ldmatrix.x4", BytesPerInstr: 512, Wavefronts: 4}
	// CpAsyncStore is the shared-memory side of a cp.async fill: 16 B per
	// thread into a swizzled tile, 4 wavefronts per warp.
	CpAsyncStore = Pattern{Name: "cp.async.16", BytesPerInstr: 512,
		Wavefronts: 4}
	// LDS32 is a 4-byte-per-thread load of consecutive words (e.g. the
	// metadata words of a sparse A tile): one wavefront.
	LDS32 = Pattern{Name: "lds.32", BytesPerInstr: 128, Wavefronts: 1}
)

// PatternFromAddrs builds a pattern from the per-thread byte addresses of
// one warp-wide access of width bytesPerThread (4, 8 or 16), with the
// bank-conflict model of NVIDIA GPUs: the warp is served in phases of
// (banks*bankBytes/bytesPerThread) threads; within a phase each bank
// serves one distinct word per wavefront (threads reading the same word
// share it), so a phase takes as many wavefronts as its most-loaded bank
// has distinct words.
func PatternFromAddrs(name string, addrs []uint64, bytesPerThread int,
	cfg SharedMemoryConfig) Pattern {
	perPhase := max(1, cfg.Banks*cfg.BankBytes/bytesPerThread)
	waves := 0
	for start := 0; start < len(addrs); start += perPhase {
		end := min(len(addrs), start+perPhase)
		waves += phaseWavefronts(addrs[start:end], bytesPerThread, cfg)
	}
	return Pattern{Name: name, BytesPerInstr: len(addrs) * bytesPerThread,
		Wavefronts: waves}
}

func phaseWavefronts(addrs []uint64, width int, cfg SharedMemoryConfig) int {
	words := make([][]uint64, cfg.Banks)
	worst := 1
	for _, a := range addrs {
		for off := 0; off < width; off += cfg.BankBytes {
			w := (a + uint64(off)) / uint64(cfg.BankBytes)
			b := int(w % uint64(cfg.Banks))
			if !containsWord(words[b], w) {
				words[b] = append(words[b], w)
				worst = max(worst, len(words[b]))
			}
		}
	}
	return worst
}

func containsWord(ws []uint64, w uint64) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// LdMatrixAddrs are the 32 row addresses of an ldmatrix.x4 reading a
// 32x16-byte block at column chunk col (16 B chunks) of a tile with
// rowBytes-byte rows. With swizzle, chunk c of row r is stored at chunk
// c XOR (r mod 8), CUTLASS's layout for 128-byte-wide rows.
func LdMatrixAddrs(rowBytes, col int, swizzle bool) []uint64 {
	addrs := make([]uint64, 32)
	for r := range addrs {
		c := col
		if swizzle {
			c ^= r % 8
		}
		addrs[r] = uint64(r*rowBytes + c*16)
	}
	return addrs
}

// SharedMemory is one SM's shared-memory datapath: a "busy-until" server
// that moves one wavefront per cycle, then the load latency.
type SharedMemory struct {
	cfg   SharedMemoryConfig
	busy  uint64
	stats SharedStats
}

// SharedStats is the traffic of one SM's shared memory.
type SharedStats struct {
	Bytes      uint64 `json:"bytes"`
	Wavefronts uint64 `json:"wavefronts"`
	BusyCycles uint64 `json:"busy_cycles"`
	Accesses   uint64 `json:"accesses"`
}

// NewSharedMemory makes the datapath of one SM.
func NewSharedMemory(cfg SharedMemoryConfig) *SharedMemory {
	return &SharedMemory{cfg: cfg}
}

// Access moves bytes with pattern p, starting no earlier than now, and
// returns the cycle the access completes (including the latency). The
// datapath is reserved for the access's wavefronts.
func (s *SharedMemory) Access(now uint64, p Pattern, bytes int) uint64 {
	waves := s.wavefronts(p, bytes)
	cycles := (waves*uint64(s.cfg.Banks*s.cfg.BankBytes) +
		uint64(s.cfg.BytesPerClk) - 1) / uint64(s.cfg.BytesPerClk)
	start := max(now, s.busy)
	s.busy = start + cycles
	s.stats.Bytes += uint64(bytes)
	s.stats.Wavefronts += waves
	s.stats.BusyCycles += cycles
	s.stats.Accesses++
	return s.busy + uint64(s.cfg.Latency)
}

// wavefronts of moving bytes with pattern p (whole instructions).
func (s *SharedMemory) wavefronts(p Pattern, bytes int) uint64 {
	if p.BytesPerInstr <= 0 || bytes <= 0 {
		return 0
	}
	instrs := (bytes + p.BytesPerInstr - 1) / p.BytesPerInstr
	return uint64(instrs * max(1, p.Wavefronts))
}

// BusyUntil is the cycle the datapath has finished every access so far
// (the depth of the MIO queue in front of it).
func (s *SharedMemory) BusyUntil() uint64 { return s.busy }

// Stats is the traffic so far.
func (s *SharedMemory) Stats() SharedStats { return s.stats }

// FillPattern is the shared-memory side of cp.async fills written at the
// config's fill rate, capped at the datapath's: one wavefront (one
// bank-array cycle) per min(fill_bytes_per_clk, bytes_per_clk) x
// 128 / bytes_per_clk bytes.
func FillPattern(cfg SharedMemoryConfig) Pattern {
	wave := cfg.Banks * cfg.BankBytes
	perWave := min(cfg.FillBytesPerClk, cfg.BytesPerClk) * wave / cfg.BytesPerClk
	return Pattern{Name: "cp.async fill", BytesPerInstr: 4 * max(1, perWave),
		Wavefronts: 4}
}
