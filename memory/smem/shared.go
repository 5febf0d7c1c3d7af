package smem

import "github.com/stcsim/stcsim/memory/memcfg"

// Pattern is how one warp-wide shared-memory instruction uses the banks:
// the bytes it moves and the wavefronts (bank-array cycles) it takes.
type Pattern struct {
	Name          string
	BytesPerInstr int
	Wavefronts    int
}

// PatternFromAddrs builds a pattern from the per-thread byte addresses of
// one warp-wide access of width bytesPerThread (4, 8 or 16), with the
// bank-conflict model of NVIDIA GPUs: the warp is served in phases of
// (banks*bankBytes/bytesPerThread) threads; within a phase each bank
// serves one distinct word per wavefront (threads reading the same word
// share it), so a phase takes as many wavefronts as its most-loaded bank
// has distinct words.
func PatternFromAddrs(name string, addrs []uint64, bytesPerThread int,
	cfg memcfg.SharedMemoryConfig) Pattern {
	return Pattern{Name: name, BytesPerInstr: len(addrs) * bytesPerThread,
		Wavefronts: Wavefronts(addrs, bytesPerThread, cfg)}
}

// Wavefronts is the number of bank-array cycles one warp-wide access of
// the given thread addresses takes (see PatternFromAddrs).
func Wavefronts(addrs []uint64, bytesPerThread int, cfg memcfg.SharedMemoryConfig) int {
	perPhase := max(1, cfg.Banks*cfg.BankBytes/bytesPerThread)
	waves := 0
	for start := 0; start < len(addrs); start += perPhase {
		end := min(len(addrs), start+perPhase)
		waves += phaseWavefronts(addrs[start:end], bytesPerThread, cfg)
	}
	return waves
}

func phaseWavefronts(addrs []uint64, width int, cfg memcfg.SharedMemoryConfig) int {
	words := make([][]uint64, cfg.Banks)
	worst := 0
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

// SharedMemory is one SM's shared-memory unit: a bank array that serves
// wavefronts, shared by the reads and stores the SM issues (LDSM, LDS,
// STS) and the cp.async data written as it arrives from the crossbar.
// A wavefront is one access of every bank, so the array serves at most
// shared_memory.ports of them per cycle (one on the A100); its data moves
// at bytes_per_clk (at most ports x banks x bank_bytes, configs check
// it), so a wavefront takes max(1/ports, its bytes / bytes_per_clk)
// cycles: at the A100's 128 B per cycle exactly one, however few of its
// bytes are useful. Requests are booked on a calendar of
// cycles: a request takes the first cycles from its start that still
// have room, so a fill booked for the cycle its packet arrives and a load
// issued earlier for an earlier cycle never wait for each other's
// bookings out of time order.
type SharedMemory struct {
	cfg   memcfg.SharedMemoryConfig
	array bankArray
	stats SharedStats
}

// SharedStats is the traffic of one SM's shared memory.
type SharedStats struct {
	Bytes      uint64 `json:"bytes"`
	Wavefronts uint64 `json:"wavefronts"`
	BusyCycles uint64 `json:"busy_cycles"`
	Accesses   uint64 `json:"accesses"`
	// FillBytes and FillWavefronts are the cp.async part of the above.
	FillBytes      uint64 `json:"fill_bytes"`
	FillWavefronts uint64 `json:"fill_wavefronts"`
}

// NewSharedMemory makes the unit of one SM.
func NewSharedMemory(cfg memcfg.SharedMemoryConfig) *SharedMemory {
	return &SharedMemory{cfg: cfg, array: newBankArray(cfg.BytesPerClk, cfg.Ports)}
}

// Access is a load or store of bytes in whole instructions of pattern p,
// issued at now (the caller's current cycle; calls come in
// non-decreasing now). It returns the cycle its data is in registers (the
// last wavefront served plus shared_memory.latency).
func (s *SharedMemory) Access(now uint64, p Pattern, bytes int) uint64 {
	waves := s.wavefronts(p, bytes)
	s.array.advance(now)
	end := s.array.book(now, waves, bytes)
	s.stats.Bytes += uint64(bytes)
	s.stats.Wavefronts += uint64(waves)
	s.stats.Accesses++
	return end + uint64(s.cfg.Latency)
}

// Write books the wavefronts of one arriving cp.async packet no earlier
// than at and returns the cycle it is written.
func (s *SharedMemory) Write(at uint64, bytes, waves int) uint64 {
	var end uint64
	if s.cfg.FillPacking && waves == 1 {
		end = s.array.bookUnits(at, bytes*s.array.ports)
	} else {
		end = s.array.book(at, waves, bytes)
	}
	s.stats.Bytes += uint64(bytes)
	s.stats.Wavefronts += uint64(waves)
	s.stats.FillBytes += uint64(bytes)
	s.stats.FillWavefronts += uint64(waves)
	return end
}

// wavefronts of moving bytes with pattern p (whole instructions).
func (s *SharedMemory) wavefronts(p Pattern, bytes int) int { return p.WavefrontsOf(bytes) }

// WavefrontsOf is the wavefronts of moving bytes with pattern p, in whole
// instructions: what an Access of them takes.
func (p Pattern) WavefrontsOf(bytes int) int {
	if p.BytesPerInstr <= 0 || bytes <= 0 {
		return 0
	}
	instrs := (bytes + p.BytesPerInstr - 1) / p.BytesPerInstr
	return instrs * max(1, p.Wavefronts)
}

// Backlog is what a lower bound on the bank array's remaining work needs
// (the selection's pruner, sim/prune.go): floor, the earliest cycle any
// booking made from now on can take (the calendar's window start: a
// booking never lands before it); booked, the units booked so far; and a
// unit count per wavefront and per cycle. A booking of w wavefronts
// costs at least w x perWave units and a cycle holds at most perCycle,
// so u units not yet booked end no sooner than floor + ceil(u / perCycle).
func (s *SharedMemory) Backlog() (floor, booked, perWave, perCycle uint64) {
	a := &s.array
	return a.base, a.booked, uint64(a.slot), uint64(a.capacity)
}

// Stats is the traffic so far.
func (s *SharedMemory) Stats() SharedStats {
	st := s.stats
	st.BusyCycles = s.array.booked / uint64(s.array.capacity)
	return st
}

// bankArray is the calendar of the bank array's cycles: cycles[i].used is
// the bytes booked in cycle base+i (at most capacity), and cycles[i].next
// is a union-find over cycles that points each full cycle at a later one
// that may have room, so a booking skips a saturated stretch in
// near-constant time. The two sit side by side because a booking reads
// both of a cycle. The window slides forward with the callers' current
// cycle and grows when a booking lands beyond it.
type bankArray struct {
	// capacity is one cycle in units of 1/ports byte: bytes_per_clk x
	// ports; a wavefront of u bytes costs max(u x ports, bytes_per_clk)
	// units, at least one port's share of a cycle.
	capacity int
	ports    int
	slot     int // bytes_per_clk: the least a wavefront costs
	base     uint64
	cycles   []bankCycle
	booked   uint64
}

type bankCycle struct{ used, next int32 }

const bankWindow = 4096

func newBankArray(bytesPerClk, ports int) bankArray {
	bytesPerClk, ports = max(1, bytesPerClk), max(1, ports)
	a := bankArray{capacity: bytesPerClk * ports, ports: ports, slot: bytesPerClk}
	a.reset(0, bankWindow)
	return a
}

func (a *bankArray) reset(base uint64, n int) {
	a.base = base
	a.cycles = make([]bankCycle, n)
	for i := range a.cycles {
		a.cycles[i].next = int32(i)
	}
}

// advance drops the cycles before now, which no booking can use any
// more, once they are half the window.
func (a *bankArray) advance(now uint64) {
	if now < a.base+uint64(len(a.cycles)/2) {
		return
	}
	d := now - a.base
	if d >= uint64(len(a.cycles)) {
		a.reset(now, len(a.cycles))
		return
	}
	n := int(d)
	copy(a.cycles, a.cycles[n:])
	for i := range a.cycles[:len(a.cycles)-n] {
		a.cycles[i].next -= int32(n)
	}
	for i := len(a.cycles) - n; i < len(a.cycles); i++ {
		a.cycles[i] = bankCycle{0, int32(i)}
	}
	a.base = now
}

// grow doubles the window until index i is in it.
func (a *bankArray) grow(i int) {
	for i >= len(a.cycles) {
		n := len(a.cycles)
		a.cycles = append(a.cycles, make([]bankCycle, n)...)
		for j := n; j < 2*n; j++ {
			a.cycles[j].next = int32(j)
		}
	}
}

// find is the first cycle index >= i with room.
func (a *bankArray) find(i int) int {
	if i >= len(a.cycles) {
		a.grow(i)
	}
	root := i
	for a.cycles[root].next != int32(root) {
		root = int(a.cycles[root].next)
		if root >= len(a.cycles) {
			a.grow(root)
		}
	}
	for a.cycles[i].next != int32(i) {
		up := int(a.cycles[i].next)
		a.cycles[i].next = int32(root)
		i = up
	}
	return root
}

// book serves waves wavefronts moving bytes in all from cycle at on
// (each wavefront at least one port's cycle) and returns the cycle after
// the one that serves their last byte (at itself for none).
func (a *bankArray) book(at uint64, waves, bytes int) uint64 {
	if waves <= 0 {
		return at
	}
	return a.bookUnits(at, max(waves*a.slot, bytes*a.ports))
}

// bookUnits books left units (1/ports byte each) from cycle at on, in the
// first cycles with room, and returns the cycle after the last one used.
func (a *bankArray) bookUnits(at uint64, left int) uint64 {
	if left <= 0 {
		return at
	}
	at = max(at, a.base)
	a.booked += uint64(left)
	i := a.find(int(at - a.base))
	for {
		c := &a.cycles[i]
		take := min(a.capacity-int(c.used), left)
		c.used += int32(take)
		left -= take
		if int(c.used) == a.capacity {
			c.next = int32(i + 1)
		}
		if left == 0 {
			return a.base + uint64(i) + 1
		}
		i = a.find(i + 1)
	}
}

// BusyUntil is the first cycle from now on at which the bank array has
// room: an access issued at now starts there (the depth of the queue in
// front of it, for MIO throttling). Fill packets booked for later cycles
// do not count until their cycle.
func (s *SharedMemory) BusyUntil(now uint64) uint64 {
	s.array.advance(now)
	at := max(now, s.array.base)
	return s.array.base + uint64(s.array.find(int(at-s.array.base)))
}

// Advance moves the bank array's calendar to now: cycles before it are
// past and can hold no more wavefronts (a cp.async's fill starts here).
func (s *SharedMemory) Advance(now uint64) { s.array.advance(now) }
