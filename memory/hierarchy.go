package memory

import "github.com/stcsim/stcsim/internal/clock"

// Hierarchy is everything below the SMs' shared memory: L1 (per SM), the
// crossbar, the L2 slices and DRAM. All times are SM-clock cycles.
// Requests must arrive in non-decreasing `now` (the engine's current
// cycle when called from an event).
type Hierarchy interface {
	// Read brings a region to SM sm. viaL1=false is cp.async (LDGSTS),
	// which bypasses L1 (global to shared); viaL1=true is an ordinary load
	// through L1 (the epilogue's C read). done(cycle) is called from the
	// hierarchy's own Akita event when the last byte has reached the SM.
	Read(now uint64, sm int, class Class, r Region, viaL1 bool,
		done func(cycle uint64))
	// CpAsync is Read for cp.async (LDGSTS: global to shared, bypassing
	// L1) that also reports each line as its data reaches the SM:
	// arrive(i, at) for the i-th line of r (rows in order, lines in
	// address order within a row), at the cycle its last sector arrived.
	// The fast model knows every arrival when the request is booked and
	// calls arrive before CpAsync returns, with future cycles; the
	// detailed model calls it from its events as each line arrives. done
	// is called as for Read, after the last arrive, with what the
	// hierarchy knows of the request's trip (for attributing waits).
	CpAsync(now uint64, sm int, class Class, r Region,
		arrive func(line int, at float64),
		done func(cycle uint64, info ReadInfo))
	// Write stores a region from SM sm (the epilogue's D) into L2
	// (write-back: DRAM is written on eviction or at Flush). done is
	// called when L2 has accepted the last byte.
	Write(now uint64, sm int, class Class, r Region, done func(cycle uint64))
	// Flush writes every dirty L2 line back to DRAM (end of kernel);
	// done is called when the last write has reached DRAM. Stats include
	// the flushed bytes afterwards.
	Flush(now uint64, done func(cycle uint64))
	// Stats is the traffic so far.
	Stats() Stats
	// Launch starts a kernel at cycle at, before its first request and
	// no earlier than any request made so far: the shared servers' booking
	// windows (calendar) are counted from it, so that the kernel's own
	// cycles do not depend on the cycle it starts at. What earlier
	// requests booked keeps its capacity. A hierarchy never told counts
	// from cycle 0.
	Launch(at uint64)
}

// Toucher is a hierarchy whose L2 tags can be brought to the state that
// reading a region leaves, its traffic counted, but in no time: the
// tiles of the k-steps sim's steady-state fast-forward leaves out, whose
// time it extrapolates, so that later reads find in L2 what the full run
// would have left there and the traffic is the full run's. A dirty line
// it evicts is counted as written back, without booking its channel.
type Toucher interface {
	Touch(class Class, r Region)
}

// Warmer is a hierarchy whose L2 can be brought, before a kernel starts,
// to the state an earlier kernel left it in (kernel.l2_start: repeat).
// Warm looks up and fills r's lines as an access of the earlier kernel
// did, dirty when write, evicting by the L2's own policy; nothing is
// counted, no time passes and no dirty victim reaches DRAM (the earlier
// kernel's traffic is not this one's).
type Warmer interface {
	Warm(class Class, r Region, write bool)
	// InheritedWrites are the DRAM writes so far (DRAMWriteBytes and each
	// class's) of sectors Warm left dirty and the kernel did not write
	// again: the earlier kernel's output, written back within this one.
	// A kernel's own output is the rest of its writes.
	InheritedWrites() Stats
}

// ClassStats is the traffic of one class.
type ClassStats struct {
	L1Bytes        uint64 `json:"l1_bytes"`
	L2Bytes        uint64 `json:"l2_bytes"`
	DRAMReadBytes  uint64 `json:"dram_read_bytes"`
	DRAMWriteBytes uint64 `json:"dram_write_bytes"`
}

// Stats is the traffic through the hierarchy and how busy each level was.
type Stats struct {
	// L1Bytes are bytes the SMs read through L1 (hits and fills).
	L1Bytes uint64 `json:"l1_bytes"`
	// L2Bytes are bytes moved between the SMs and L2 (reads and writes).
	L2Bytes        uint64 `json:"l2_bytes"`
	DRAMReadBytes  uint64 `json:"dram_read_bytes"`
	DRAMWriteBytes uint64 `json:"dram_write_bytes"`
	// PerClass splits the same traffic by operand class.
	PerClass [NumClasses]ClassStats `json:"per_class"`
	// L1 and L2 hits and misses, counted in sectors.
	L1HitSectors  uint64 `json:"l1_hit_sectors"`
	L1MissSectors uint64 `json:"l1_miss_sectors"`
	L2HitSectors  uint64 `json:"l2_hit_sectors"`
	L2MissSectors uint64 `json:"l2_miss_sectors"`
	// Busy cycles of the busiest server of each level, for bottleneck
	// attribution: an L1, an L2 slice, a DRAM channel, a crossbar port.
	MaxL1Busy      uint64 `json:"max_l1_busy_cycles"`
	MaxSliceBusy   uint64 `json:"max_slice_busy_cycles"`
	MaxChannelBusy uint64 `json:"max_channel_busy_cycles"`
	MaxPortBusy    uint64 `json:"max_port_busy_cycles"`
	// Requests is the number of Read and Write calls.
	Requests uint64 `json:"requests"`
}

// Counters are every counter of s, in a fixed order, for the code that
// extends a run's counts to work it did not simulate (wave extrapolation,
// the fast-forward, the fit in K). All of them grow with the work: the
// traffic and request counts are sums, and the Max*Busy fields, the busy
// cycles of a level's busiest server, grow with the time that server
// stays the busiest, so each extends like the others. A counter added to
// Stats must be listed here (TestStatsCountersCoverEveryField).
func (s *Stats) Counters() []*uint64 {
	c := []*uint64{&s.L1Bytes, &s.L2Bytes, &s.DRAMReadBytes, &s.DRAMWriteBytes,
		&s.L1HitSectors, &s.L1MissSectors, &s.L2HitSectors, &s.L2MissSectors,
		&s.MaxL1Busy, &s.MaxSliceBusy, &s.MaxChannelBusy, &s.MaxPortBusy, &s.Requests}
	for i := range s.PerClass {
		k := &s.PerClass[i]
		c = append(c, &k.L1Bytes, &k.L2Bytes, &k.DRAMReadBytes, &k.DRAMWriteBytes)
	}
	return c
}

// L2HitRate is the fraction of L2 sector accesses that hit (0 when none).
func (s Stats) L2HitRate() float64 {
	n := s.L2HitSectors + s.L2MissSectors
	if n == 0 {
		return 0
	}
	return float64(s.L2HitSectors) / float64(n)
}

// MetadataBytes are the bytes of A's sparsity metadata read from L2.
func (s Stats) MetadataBytes() uint64 { return s.PerClass[AMeta].L2Bytes }

// params are the derived quantities both granularities share.
type params struct {
	name                string // the hierarchy's Akita name, prefix of its parts
	cfg                 Config
	numSMs              int
	lineBytes, secBytes uint64
	slices, partitions  int
	slicesPerPart       int
	l2Sets, l2Ways      int
	l1Sets, l1Ways      int
	amap                addressMap
	sliceRate, chanRate float64 // bytes per cycle
	portRate, l1Rate    float64
	nearLat, farLat     float64
	dramExtra           float64 // DRAM access beyond an L2 hit
	l1Lat               float64
	wbEntries           int     // dirty victims a slice holds on the way to DRAM
	writeCost           float64 // a written byte's share of slice time, in read bytes
	// DRAM bus direction (dramBus): a written byte's channel time and two
	// turns', in read bytes, and the bytes of a write batch
	dramWriteCost, dramTurnBytes, dramBatchBytes float64
}

func deriveParams(cfg Config, clk clock.Clock, numSMs int) params {
	l2 := cfg.L2
	slices := l2.Partitions * l2.SlicesPerPartition
	sliceBytes := l2.SizeKB * 1024 / slices
	l1Bytes := (cfg.L1.TotalKB - cfg.SharedMemory.CarveoutKB) * 1024
	chanGBps := cfg.DRAM.SustainedGBps() / float64(cfg.DRAM.Channels)
	return params{
		cfg: cfg, numSMs: numSMs,
		lineBytes: uint64(l2.LineBytes), secBytes: uint64(l2.SectorBytes),
		slices: slices, partitions: l2.Partitions,
		slicesPerPart: l2.SlicesPerPartition,
		l2Sets:        sliceBytes / (l2.LineBytes * l2.Ways), l2Ways: l2.Ways,
		l1Sets: l1Bytes / (cfg.L1.LineBytes * cfg.L1.Ways),
		l1Ways: cfg.L1.Ways,
		amap: addressMap{slices: uint64(slices),
			channels: uint64(cfg.DRAM.Channels), xor: l2.Hash == "xor"},
		sliceRate: float64(l2.BytesPerClk) * l2.Efficiency / float64(slices),
		chanRate:  chanGBps * 1e9 / float64(clk.Freq),
		portRate:  float64(cfg.Crossbar.PortBytesPerClk),
		l1Rate:    float64(cfg.L1.BytesPerClk),
		nearLat:   float64(l2.NearLatency), farLat: float64(l2.FarLatency),
		dramExtra: float64(cfg.DRAM.Latency) -
			float64(l2.NearLatency+l2.FarLatency)/2,
		l1Lat:          float64(cfg.L1.HitLatency),
		wbEntries:      l2.WritebackEntries,
		writeCost:      1 / l2.WriteRatio,
		dramWriteCost:  cfg.DRAM.Efficiency / cfg.DRAM.WriteEfficiency,
		dramTurnBytes:  2 * cfg.DRAM.TurnaroundNs * chanGBps, // ns x GB/s = B
		dramBatchBytes: float64(cfg.DRAM.WriteBatchBytes),
	}
}

// partitionOf is the L2 partition an SM is attached to: SMs are split
// into equal contiguous groups (GPCs attach to one partition each).
func (p *params) partitionOf(sm int) int { return sm * p.partitions / p.numSMs }

// hitLatency is the L2 hit latency from SM sm to slice s.
func (p *params) hitLatency(sm, s int) float64 {
	if s/p.slicesPerPart == p.partitionOf(sm) {
		return p.nearLat
	}
	return p.farLat
}
