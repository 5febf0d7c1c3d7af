package memcfg

import "github.com/stcsim/stcsim/internal/check"

// The granularities of a hierarchy (the sim.memory_granularity key).
const (
	Fast     = "fast"
	Detailed = "detailed"
)

// Granularities lists the granularities, Fast first.
func Granularities() []string { return []string{Fast, Detailed} }

// SharedMemoryConfig is the per-SM shared memory (the carve-out of the
// unified L1/shared array).
type SharedMemoryConfig struct {
	CarveoutKB        int   `yaml:"carveout_kb"`
	CarveoutOptionsKB []int `yaml:"carveout_options_kb"`
	Banks             int   `yaml:"banks"`
	BankBytes         int   `yaml:"bank_bytes"`
	// Ports is the wavefronts the bank array serves per cycle (1: each
	// bank serves one word per cycle; more is a multi-ported array).
	Ports int `yaml:"ports"`
	// BytesPerClk is the bytes the bank array moves per cycle: at most
	// Ports x Banks x BankBytes; below that a wavefront takes several
	// cycles.
	BytesPerClk int `yaml:"bytes_per_clk"`
	Latency     int `yaml:"latency"`
	// FillArbitration is who wins a bank-array cycle wanted by both a
	// cp.async packet and a load: fills_first (a packet takes the cycle it
	// arrives in) or loads_first (packets wait in a fill buffer for cycles
	// the loads leave free).
	FillArbitration string `yaml:"fill_arbitration"`
	// FillPacking lets cp.async packets share bank-array cycles: a packet
	// of one wavefront costs only its bytes' share of a cycle (two 64-B
	// packets in one cycle), not a whole cycle however few of its banks
	// it uses. A what-if of the fill path (a write buffer that packs
	// half-used packets); off on every shipped config.
	FillPacking bool `yaml:"fill_packing"`
}

// Fill arbitration policies (shared_memory.fill_arbitration).
const (
	FillsFirst = "fills_first"
	LoadsFirst = "loads_first"
)

// L1Config is the per-SM L1 data cache.
type L1Config struct {
	TotalKB     int `yaml:"total_kb"` // unified L1 + shared array
	LineBytes   int `yaml:"line_bytes"`
	SectorBytes int `yaml:"sector_bytes"`
	Ways        int `yaml:"ways"`
	HitLatency  int `yaml:"hit_latency"`
	BytesPerClk int `yaml:"bytes_per_clk"`
}

// L2Config is the partitioned, sliced L2.
type L2Config struct {
	SizeKB             int `yaml:"size_kb"`
	Partitions         int `yaml:"partitions"`
	SlicesPerPartition int `yaml:"slices_per_partition"`
	LineBytes          int `yaml:"line_bytes"`
	SectorBytes        int `yaml:"sector_bytes"`
	Ways               int `yaml:"ways"`
	NearLatency        int `yaml:"near_latency"`
	FarLatency         int `yaml:"far_latency"`
	BytesPerClk        int `yaml:"bytes_per_clk"`
	// WriteRatio is the slices' store bandwidth as a fraction of
	// BytesPerClk: a slice serves reads and writes in one stream, a
	// written byte taking 1/WriteRatio of a read byte's slot.
	WriteRatio float64 `yaml:"write_ratio"`
	// Efficiency is the fraction of BytesPerClk that the slices sustain
	// on streaming reads (tag and bank pipeline bubbles).
	Efficiency float64 `yaml:"efficiency"`
	Hash       string  `yaml:"hash"`
	// WritebackEntries is how many dirty victim lines a slice holds on
	// their way to DRAM. A write or fill that evicts a dirty line while
	// every entry is still draining waits for the oldest to reach its
	// channel, so a burst of stores into an L2 full of dirty lines runs
	// at DRAM write bandwidth, not at the slices'.
	WritebackEntries int `yaml:"writeback_entries"`
}

// CrossbarConfig is the SM-to-L2 crossbar.
type CrossbarConfig struct {
	PortBytesPerClk int `yaml:"port_bytes_per_clk"`
}

// DRAMConfig is the device memory.
type DRAMConfig struct {
	Kind          string  `yaml:"kind"`
	Channels      int     `yaml:"channels"`
	BandwidthGBps float64 `yaml:"bandwidth_gbps"`
	Efficiency    float64 `yaml:"efficiency"`
	// WriteEfficiency is the fraction of BandwidthGBps a stream of writes
	// alone sustains (Efficiency is a stream of reads').
	WriteEfficiency float64 `yaml:"write_efficiency"`
	// TurnaroundNs is the bus time one change of direction costs (a read
	// after writes, or writes after a read), and WriteBatchBytes the
	// writes the controller buffers and sends per change: traffic that
	// mixes reads and writes pays two changes per batch.
	TurnaroundNs    float64 `yaml:"turnaround_ns"`
	WriteBatchBytes int     `yaml:"write_batch_bytes"`
	Latency         int     `yaml:"latency"`
	SizeGB          int     `yaml:"size_gb"`
}

// SustainedGBps is the DRAM's sustained bandwidth: its peak times its
// efficiency, in GB/s.
func (d DRAMConfig) SustainedGBps() float64 { return d.BandwidthGBps * d.Efficiency }

// SustainedBytesPerCycle is the sustained bandwidth in bytes per cycle
// of a clock of hz.
func (d DRAMConfig) SustainedBytesPerCycle(hz float64) float64 {
	return d.SustainedGBps() * 1e9 / hz
}

// Config is the whole memory hierarchy.
type Config struct {
	SharedMemory SharedMemoryConfig `yaml:"shared_memory"`
	L1           L1Config           `yaml:"l1"`
	L2           L2Config           `yaml:"l2"`
	Crossbar     CrossbarConfig     `yaml:"crossbar"`
	DRAM         DRAMConfig         `yaml:"dram"`
}

// Validate checks the section.
func (c *Config) Validate() check.List {
	var l check.List
	s := c.SharedMemory
	if len(s.CarveoutOptionsKB) == 0 {
		l.Add("shared_memory.carveout_options_kb", "must list at least one "+
			"carve-out size in KB")
	} else {
		l.OneOfInt("shared_memory.carveout_kb", s.CarveoutKB, s.CarveoutOptionsKB)
	}
	l.PowerOfTwo("shared_memory.banks", s.Banks)
	l.PowerOfTwo("shared_memory.bank_bytes", s.BankBytes)
	l.Positive("shared_memory.bytes_per_clk", s.BytesPerClk)
	l.Positive("shared_memory.ports", s.Ports)
	// A bank serves one word per port and cycle, so the array moves at
	// most ports wavefronts (banks x bank_bytes each) per cycle;
	// bytes_per_clk can narrow that (a wavefront then takes several
	// cycles) but not widen it.
	if w := s.Ports * s.Banks * s.BankBytes; s.Ports > 0 && s.Banks > 0 && s.BankBytes > 0 && s.BytesPerClk > w {
		l.AddWith("shared_memory.bytes_per_clk", []string{"shared_memory.ports",
			"shared_memory.banks", "shared_memory.bank_bytes"}, "%d exceeds what the banks "+
			"serve: ports x banks x bank_bytes = %d x %d x %d = %d B per "+
			"cycle (a bank serves one word per port and cycle; set "+
			"bytes_per_clk to at most %[5]d as well, or add banks, bank "+
			"width or ports)", s.BytesPerClk, s.Ports, s.Banks, s.BankBytes, w)
	}
	l.Positive("shared_memory.latency", s.Latency)
	l.OneOf("shared_memory.fill_arbitration", s.FillArbitration, FillsFirst, LoadsFirst)
	for _, kb := range s.CarveoutOptionsKB {
		if kb > c.L1.TotalKB {
			l.AddWith("shared_memory.carveout_options_kb", []string{"l1.total_kb"}, "option %d KB "+
				"exceeds l1.total_kb (%d)", kb, c.L1.TotalKB)
		}
	}
	l.Positive("l1.total_kb", c.L1.TotalKB)
	l.PowerOfTwo("l1.line_bytes", c.L1.LineBytes)
	l.PowerOfTwo("l1.sector_bytes", c.L1.SectorBytes)
	l.PowerOfTwo("l1.ways", c.L1.Ways)
	l.Positive("l1.hit_latency", c.L1.HitLatency)
	l.Positive("l1.bytes_per_clk", c.L1.BytesPerClk)
	l2 := c.L2
	l.Positive("l2.size_kb", l2.SizeKB)
	l.Positive("l2.partitions", l2.Partitions)
	l.Positive("l2.slices_per_partition", l2.SlicesPerPartition)
	l.PowerOfTwo("l2.line_bytes", l2.LineBytes)
	l.PowerOfTwo("l2.sector_bytes", l2.SectorBytes)
	l.PowerOfTwo("l2.ways", l2.Ways)
	l.Positive("l2.near_latency", l2.NearLatency)
	l.Positive("l2.far_latency", l2.FarLatency)
	l.Positive("l2.bytes_per_clk", l2.BytesPerClk)
	if !(l2.WriteRatio > 0 && l2.WriteRatio <= 1) {
		l.Add("l2.write_ratio", "must be in (0, 1] (got %g)", l2.WriteRatio)
	}
	if !(l2.Efficiency > 0 && l2.Efficiency <= 1) {
		l.Add("l2.efficiency", "must be in (0, 1] (got %g)", l2.Efficiency)
	} else if l2.BytesPerClk > 0 && float64(l2.BytesPerClk)*l2.Efficiency < MinL2BytesPerClk {
		// The floor of l2.bytes_per_clk holds for what the slices sustain.
		l.AddWith("l2.efficiency", []string{"l2.bytes_per_clk"}, "%g of l2.bytes_per_clk %d sustains %.3g B/clk, below the "+
			"least simulated in reasonable time (%g B/clk); raise either key", l2.Efficiency,
			l2.BytesPerClk, float64(l2.BytesPerClk)*l2.Efficiency, float64(MinL2BytesPerClk))
	}
	l.OneOf("l2.hash", l2.Hash, "xor", "modulo")
	l.Positive("l2.writeback_entries", l2.WritebackEntries)
	l.Positive("crossbar.port_bytes_per_clk", c.Crossbar.PortBytesPerClk)
	l.OneOf("dram.kind", c.DRAM.Kind, "HBM2", "HBM2e", "HBM3", "HBM3e", "GDDR6", "GDDR6X")
	l.Positive("dram.channels", c.DRAM.Channels)
	l.PositiveF("dram.bandwidth_gbps", c.DRAM.BandwidthGBps)
	dramEfficiency(&l, "dram.efficiency", c.DRAM.Efficiency, c.DRAM.BandwidthGBps)
	dramEfficiency(&l, "dram.write_efficiency", c.DRAM.WriteEfficiency, c.DRAM.BandwidthGBps)
	if !(c.DRAM.TurnaroundNs >= 0 && c.DRAM.TurnaroundNs <= MaxTurnaroundNs) {
		l.Add("dram.turnaround_ns", "must be in [0, %g] (got %g)", float64(MaxTurnaroundNs), c.DRAM.TurnaroundNs)
	}
	l.Positive("dram.write_batch_bytes", c.DRAM.WriteBatchBytes)
	if d := c.DRAM; d.TurnaroundNs > 0 && d.WriteBatchBytes > 0 && d.Channels > 0 &&
		float64(d.WriteBatchBytes)/(2*d.TurnaroundNs)*float64(d.Channels) < MinDRAMGBps {
		// Writes among reads move at most a batch per two turns.
		l.AddWith("dram.turnaround_ns", []string{"dram.write_batch_bytes", "dram.channels"},
			"%g ns per turn leaves %d channels of %d-B write batches %.3g GB/s, below the least "+
				"simulated in reasonable time (%g GB/s); lower it or raise the batch",
			d.TurnaroundNs, d.Channels, d.WriteBatchBytes,
			float64(d.WriteBatchBytes)/(2*d.TurnaroundNs)*float64(d.Channels), float64(MinDRAMGBps))
	}
	l.Positive("dram.latency", c.DRAM.Latency)
	l.Positive("dram.size_gb", c.DRAM.SizeGB)
	if len(l) == 0 {
		l = append(l, c.consistency()...)
	}
	return l
}

// dramEfficiency checks an efficiency of the DRAM's bandwidth: in (0, 1]
// and sustaining at least MinDRAMGBps.
func dramEfficiency(l *check.List, key string, eff, gbps float64) {
	if !(eff > 0 && eff <= 1) {
		l.Add(key, "must be in (0, 1] (got %g)", eff)
	} else if gbps > 0 && gbps*eff < MinDRAMGBps {
		// The floor of dram.bandwidth_gbps holds for what the channels sustain.
		l.AddWith(key, []string{"dram.bandwidth_gbps"}, "%g of dram.bandwidth_gbps %g sustains %.3g GB/s, below the "+
			"least simulated in reasonable time (%g GB/s); raise either key", eff,
			gbps, gbps*eff, float64(MinDRAMGBps))
	}
}

// MinDRAMGBps and MinL2BytesPerClk are the least sustained DRAM and L2
// bandwidths (bandwidth x efficiency) a config may have: a tenth of the
// bottoms of dram.bandwidth_gbps and l2.bytes_per_clk in configs.Bounds
// (so that those bottoms stay usable at any ordinary efficiency), which
// a tiny efficiency would otherwise get far under (a 256^3 GEMM at 1e-300
// of the A100's DRAM bandwidth never ends; at 1e-6 it took 50 s).
const (
	MinDRAMGBps      = 0.1
	MinL2BytesPerClk = 0.1
	// MaxTurnaroundNs bounds dram.turnaround_ns: a microsecond per change
	// of direction is a thousand times any DRAM's.
	MaxTurnaroundNs = 1000
)

func (c *Config) consistency() check.List {
	var l check.List
	l2 := c.L2
	slices := l2.Partitions * l2.SlicesPerPartition
	if l2.SizeKB%slices != 0 {
		l.AddWith("l2.size_kb", []string{"l2.partitions", "l2.slices_per_partition"},
			"%d KB does not divide into %d slices", l2.SizeKB, slices)
	} else {
		sliceBytes := l2.SizeKB * 1024 / slices
		sets := sliceBytes / (l2.LineBytes * l2.Ways)
		if sets <= 0 || sets&(sets-1) != 0 {
			l.AddWith("l2.size_kb", []string{"l2.partitions", "l2.slices_per_partition",
				"l2.ways", "l2.line_bytes"}, "each slice (%d B, %d-way, %d B lines) "+
				"must have a power-of-two number of sets (got %d)",
				sliceBytes, l2.Ways, l2.LineBytes, sets)
		}
	}
	if l2.SectorBytes > l2.LineBytes {
		l.AddWith("l2.sector_bytes", []string{"l2.line_bytes"}, "must not exceed l2.line_bytes")
	}
	if l2.FarLatency < l2.NearLatency {
		l.AddWith("l2.far_latency", []string{"l2.near_latency"}, "must be >= l2.near_latency (%d)", l2.NearLatency)
	}
	if l2.LineBytes/l2.SectorBytes > 64 {
		l.Add("l2.sector_bytes", "at most 64 sectors per line (got %d)",
			l2.LineBytes/l2.SectorBytes)
	}
	if c.L1.SectorBytes > c.L1.LineBytes {
		l.AddWith("l1.sector_bytes", []string{"l1.line_bytes"}, "must not exceed l1.line_bytes")
	}
	if c.L1.LineBytes != l2.LineBytes || c.L1.SectorBytes != l2.SectorBytes {
		l.AddWith("l1.line_bytes", []string{"l1.sector_bytes", "l2.line_bytes",
			"l2.sector_bytes"}, "L1 lines and sectors (%d/%d B) must equal "+
			"L2's (%d/%d B)", c.L1.LineBytes, c.L1.SectorBytes,
			l2.LineBytes, l2.SectorBytes)
	}
	if c.SharedMemory.CarveoutKB > c.L1.TotalKB {
		l.AddWith("shared_memory.carveout_kb", []string{"l1.total_kb"}, "%d KB exceeds l1.total_kb (%d)",
			c.SharedMemory.CarveoutKB, c.L1.TotalKB)
	}
	if uint64(l2.SizeKB) > uint64(c.DRAM.SizeGB)<<20 {
		l.AddWith("l2.size_kb", []string{"dram.size_gb"}, "%d KB is larger than the DRAM (%d GB)",
			l2.SizeKB, c.DRAM.SizeGB)
	}
	if c.DRAM.Latency < l2.FarLatency {
		l.AddWith("dram.latency", []string{"l2.far_latency"}, "must be >= l2.far_latency (%d): a DRAM "+
			"access passes through L2", l2.FarLatency)
	}
	return l
}
