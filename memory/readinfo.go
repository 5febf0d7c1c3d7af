package memory

// Cause is what a cp.async stage's arrival was bound by: which level its
// latest line came from, and whether it was late for that level's
// latency or for queueing at a bandwidth limit on the way.
type Cause uint8

const (
	CauseL2Latency     Cause = iota // an L2 hit's unloaded round trip
	CauseL2Bandwidth                // queueing for an L2 slice
	CauseDRAMLatency                // a miss's (or a merged fill's) unloaded round trip
	CauseDRAMBandwidth              // queueing for a DRAM channel
	CauseCrossbar                   // queueing at the SM's crossbar port
	CauseSmem                       // queueing for the bank array to write the data
	NumCauses
)

var causeNames = [...]string{"l2_latency", "l2_bandwidth", "dram_latency",
	"dram_bandwidth", "crossbar", "smem_write"}

func (c Cause) String() string {
	if c < NumCauses {
		return causeNames[c]
	}
	return "unknown"
}

// IsDRAM says the cause lies at DRAM.
func (c Cause) IsDRAM() bool { return c == CauseDRAMLatency || c == CauseDRAMBandwidth }

// ReadInfo is what the hierarchy knows of one cp.async request once it
// has arrived: its size, where its lines came from, and the line that
// arrived last (the one the stage waited for) with its unloaded latency
// and its queueing at each level. Cycles are SM cycles; waits are
// fractional.
type ReadInfo struct {
	Issued      uint64
	Lines       int
	Sectors     int // sectors moved (L2 hits and misses)
	DRAMSectors int // sectors read from DRAM
	// Critical is the last line to arrive.
	Critical lineInfo
}

// lineInfo is one line's trip: its unloaded latency (transfer times
// included), its own serialization behind the request's earlier lines at
// the port, and the queueing it met at the port, its slice and its DRAM
// channel.
type lineInfo struct {
	at, lat, own         float64
	port, slice, channel float64
	sectors, dramSectors int
	merged               bool
}

// Unloaded is the latency the last line would have had with the hierarchy
// to itself: its own transfer behind the request's earlier lines plus the
// level's round trip.
func (i ReadInfo) Unloaded() float64 { return i.Critical.own + i.Critical.lat }

// Queued is the last line's queueing: port, slice and channel waits.
func (i ReadInfo) Queued() float64 {
	c := i.Critical
	return c.port + c.slice + c.channel
}

func (i *ReadInfo) add(l lineInfo, at, now float64) {
	i.Lines++
	i.Sectors += l.sectors
	i.DRAMSectors += l.dramSectors
	l.at = at
	if i.Lines == 1 || at >= i.Critical.at {
		i.Critical = l
	}
}

// cause classifies the arrival (not the shared-memory writes).
func (i ReadInfo) cause() Cause {
	c := i.Critical
	dram := c.dramSectors > 0 || c.merged
	q := i.Queued()
	switch {
	case q <= 1 || q < 0.05*i.Unloaded():
		if dram {
			return CauseDRAMLatency
		}
		return CauseL2Latency
	case c.port >= c.slice && c.port >= c.channel:
		return CauseCrossbar
	case c.channel >= c.slice:
		return CauseDRAMBandwidth
	}
	return CauseL2Bandwidth
}
