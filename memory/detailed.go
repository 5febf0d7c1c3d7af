package memory

import (
	"math"
	"math/bits"

	"github.com/sarchlab/akita/v3/mem/cache/writeback"
	"github.com/sarchlab/akita/v3/mem/mem"
	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// detailed sends every line through Akita components: an agent that
// stands for the SMs' crossbar ports, one Akita writeback cache per L2
// slice and one DRAM channel component per channel. L1 (used only by
// loads through L1) is the same tag model as in the fast granularity.
type detailed struct {
	agent    *agent
	slices   []*writeback.Cache
	channels []*dramChannel
	classOf  map[uint64]Class // line -> class of its last access
	// sliceOfPort maps a slice's bottom port to its index.
	sliceOfPort map[akita.Port]int
}

// Slice constants. Akita's writeback cache is not sectored, so the slices
// are built with sector-sized blocks, and hits, misses and DRAM traffic
// count in sectors as in the fast model. A slice's bandwidth is enforced
// by the agent (a bandwidth-limited connection: sliceRate bytes per SM
// cycle into each slice); the Akita caches run at sliceClockRatio times
// the SM clock with sliceReqPerCycle requests per cycle, so that their
// own pipelines (one bottom response, one MSHR response per cycle) never
// limit a slice below its configured rate. The MSHR and in-flight limits
// are high for the same reason.
const (
	sliceBankLatency = 1
	sliceMSHR        = 1024
	sliceReqPerCycle = 4
	sliceClockRatio  = 1
	portBuf          = 64
)

func newDetailed(engine akita.Engine, clk clock.Clock, p params) *detailed {
	d := &detailed{classOf: map[uint64]Class{}, sliceOfPort: map[akita.Port]int{}}
	d.agent = newAgent(engine, clk, p, d.classOf)
	sliceFreq := akita.Freq(float64(clk.Freq) * sliceClockRatio)
	l2Conn := akita.NewDirectConnection(p.name+".L2Conn", engine, clk.Freq)
	ctlConn := akita.NewDirectConnection(p.name+".CtlConn", engine, clk.Freq)
	dramConn := akita.NewDirectConnection(p.name+".DRAMConn", engine, clk.Freq)
	for _, port := range d.agent.toL2 {
		l2Conn.PlugIn(port, portBuf)
	}
	ctlConn.PlugIn(d.agent.control, portBuf)
	for i := 0; i < p.cfg.DRAM.Channels; i++ {
		ch := newDRAMChannel(engine, clk, p, i, d)
		d.channels = append(d.channels, ch)
		dramConn.PlugIn(ch.top, portBuf)
	}
	for i := 0; i < p.slices; i++ {
		c := writeback.MakeBuilder().
			WithEngine(engine).WithFreq(sliceFreq).
			WithByteSize(uint64(p.l2Sets*p.l2Ways) * p.lineBytes).
			WithWayAssociativity(p.l2Ways).
			WithLog2BlockSize(uint64(math.Log2(float64(p.secBytes)))).
			WithNumMSHREntry(sliceMSHR).
			WithNumReqPerCycle(sliceReqPerCycle).
			WithMaxInflightFetch(sliceMSHR).
			// The slices' blocks are sectors: a line's entry is its sectors.
			WithMaxInflightEviction(p.wbEntries * int(p.lineBytes/p.secBytes)).
			WithBankLatency(sliceBankLatency).
			WithLowModuleFinder(&channelFinder{p: &d.agent.p, slice: i,
				channels: d.channels}).
			Build(akita.BuildNameWithIndex(p.name, "L2Slice", i))
		d.slices = append(d.slices, c)
		l2Conn.PlugIn(c.GetPortByName("Top"), portBuf)
		ctlConn.PlugIn(c.GetPortByName("Control"), portBuf)
		dramConn.PlugIn(c.GetPortByName("Bottom"), portBuf)
		d.sliceOfPort[c.GetPortByName("Bottom")] = i
	}
	d.agent.slices = d.slices
	return d
}

// channelFinder routes a slice's misses and evictions to the DRAM channel
// of the line (slices see slice-local addresses).
type channelFinder struct {
	p        *params
	slice    int
	channels []*dramChannel
}

// Find implements mem.LowModuleFinder.
func (f *channelFinder) Find(addr uint64) akita.Port {
	line := f.p.amap.lineOf(f.slice, addr/f.p.lineBytes)
	return f.channels[f.p.amap.channel(line)].top
}

func (d *detailed) Read(now uint64, sm int, class Class, r Region,
	viaL1 bool, done func(cycle uint64)) {
	d.agent.submit(now, sm, class, r, viaL1, false, done, nil)
}

// CpAsync implements Hierarchy. The Akita path does not report where a
// sector was served, so the info is the request's size and a latency
// classification: the last line's round trip against the unloaded L2
// and DRAM latencies (queueing beyond DRAM's latency counts as DRAM
// bandwidth).
func (d *detailed) CpAsync(now uint64, sm int, class Class, r Region,
	arrive func(line int, at float64), done func(cycle uint64, info ReadInfo)) {
	info := ReadInfo{Issued: now}
	p := &d.agent.p
	r.forEachLine(p.lineBytes, p.secBytes, func(s lineSpan) {
		info.Lines++
		info.Sectors += bits.OnesCount64(s.mask)
	})
	d.agent.submit(now, sm, class, r, false, false, func(c uint64) {
		done(c, d.classify(info, float64(c-now)))
	}, arrive)
}

// classify fills a detailed request's critical line from its round trip
// rt: up to the far L2 latency plus its own transfer it is an L2 access,
// beyond that DRAM; what exceeds the unloaded latency is queueing.
func (d *detailed) classify(info ReadInfo, rt float64) ReadInfo {
	p := &d.agent.p
	own := float64(info.Sectors) * float64(p.secBytes) / p.portRate
	c := lineInfo{at: rt, own: own, lat: p.farLat}
	if rt > own+p.farLat+1 {
		c.dramSectors, c.lat = 1, float64(p.cfg.DRAM.Latency)
	}
	if q := rt - own - c.lat; q > 0 {
		if c.dramSectors > 0 {
			c.channel = q
		} else {
			c.slice = q
		}
	}
	info.Critical = c
	return info
}

func (d *detailed) Write(now uint64, sm int, class Class, r Region,
	done func(cycle uint64)) {
	d.agent.submit(now, sm, class, r, false, true, done, nil)
}

func (d *detailed) Flush(now uint64, done func(cycle uint64)) {
	d.agent.flush(now, done)
}

// Launch implements Hierarchy. The detailed model books no windows; its
// agent's port and slice credits, which refill with the cycles since its
// last tick, start the kernel full, as after any idle gap.
func (d *detailed) Launch(at uint64) { d.agent.launch(at) }

func (d *detailed) Stats() Stats {
	s := d.agent.stats
	s.MaxL1Busy = maxSpent(d.agent.l1.srv)
	s.MaxPortBusy = uint64(d.agent.maxPortBusy() + 0.5)
	var ch []server
	for _, c := range d.channels {
		s.DRAMReadBytes += c.readBytes
		s.DRAMWriteBytes += c.writeBytes
		for k := range s.PerClass {
			s.PerClass[k].DRAMReadBytes += c.perClass[k].DRAMReadBytes
			s.PerClass[k].DRAMWriteBytes += c.perClass[k].DRAMWriteBytes
		}
		ch = append(ch, c.srv)
	}
	s.MaxChannelBusy = maxSpent(ch)
	s.L2MissSectors = s.DRAMReadBytes / d.agent.p.secBytes
	s.L2HitSectors = d.agent.readSectors - min(d.agent.readSectors,
		s.L2MissSectors)
	s.L2HitSectors += d.agent.writeSectors
	s.MaxSliceBusy = d.agent.maxSliceBusy()
	return s
}

var _ mem.LowModuleFinder = (*channelFinder)(nil)
