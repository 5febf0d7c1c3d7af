package memory

import (
	"math"

	"github.com/sarchlab/akita/v3/mem/mem"
	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// dramChannel is one DRAM channel of the detailed model: a bandwidth
// server (the channel's share of the configured bandwidth times its
// efficiency) followed by a fixed latency. Akita's mem/dram is not used:
// one controller issues one command per DRAM cycle and, measured, moves
// at most about 29 GB/s with 128 B reads (docs/memory.md), below the
// 38.9-51 GB/s an A100 HBM2/HBM2e channel needs.
type dramChannel struct {
	*akita.TickingComponent
	cb    clock.Callbacks
	p     *params
	d     *detailed
	top   akita.Port
	srv   server
	bus   dramBus
	lat   float64
	queue []dramRsp

	readBytes, writeBytes uint64
	perClass              [NumClasses]ClassStats
}

type dramRsp struct {
	due uint64
	req akita.Msg
}

func newDRAMChannel(engine akita.Engine, clk clock.Clock, p params, i int,
	d *detailed) *dramChannel {
	c := &dramChannel{cb: clock.Callbacks{Engine: engine, Clock: clk},
		p: &d.agent.p, d: d, srv: server{rate: p.chanRate},
		bus: newDRAMBuses(1, p)[0],
		lat: p.dramExtra - akitaMissCycles}
	name := akita.BuildNameWithIndex(p.name, "DRAMChannel", i)
	c.TickingComponent = akita.NewTickingComponent(name, engine, clk.Freq, c)
	c.top = akita.NewLimitNumMsgPort(c, 1<<12, name+".Top")
	c.AddPort("Top", c.top)
	return c
}

// Tick sends due responses before taking new requests (drain before
// fill), and keeps ticking while responses are pending.
func (c *dramChannel) Tick(now akita.VTimeInSec) bool {
	progress := c.respond(now)
	progress = c.accept(now) || progress
	return progress || len(c.queue) > 0
}

func (c *dramChannel) accept(now akita.VTimeInSec) bool {
	progress := false
	cyc := float64(c.cb.Clock.Cycle(now))
	for m := c.top.Retrieve(now); m != nil; m = c.top.Retrieve(now) {
		bytes, write := c.account(m)
		_, end := c.srv.reserve(cyc, c.bus.cost(write, float64(bytes)))
		due := uint64(math.Ceil(end + max(0, c.lat) - 1e-9))
		c.queue = append(c.queue, dramRsp{due: due, req: m})
		progress = true
	}
	return progress
}

// account counts a request's bytes and says whether it writes.
func (c *dramChannel) account(m akita.Msg) (uint64, bool) {
	switch r := m.(type) {
	case *mem.ReadReq:
		k := c.classOf(r.Src, r.Address)
		c.readBytes += r.AccessByteSize
		c.perClass[k].DRAMReadBytes += r.AccessByteSize
		return r.AccessByteSize, false
	case *mem.WriteReq:
		n := uint64(len(r.Data))
		k := c.classOf(r.Src, r.Address)
		c.writeBytes += n
		c.perClass[k].DRAMWriteBytes += n
		return n, true
	}
	return 0, false
}

// classOf is the class of the line a slice-local address belongs to.
func (c *dramChannel) classOf(src akita.Port, addr uint64) Class {
	i := c.d.sliceOfPort[src]
	return c.d.classOf[c.p.amap.lineOf(i, addr/c.p.lineBytes)]
}

func (c *dramChannel) respond(now akita.VTimeInSec) bool {
	cyc := c.cb.Clock.Cycle(now)
	progress := false
	for len(c.queue) > 0 && c.queue[0].due <= cyc {
		if c.top.Send(c.response(now, c.queue[0].req)) != nil {
			break
		}
		c.queue = c.queue[1:]
		progress = true
	}
	return progress
}

func (c *dramChannel) response(now akita.VTimeInSec, m akita.Msg) akita.Msg {
	if r, ok := m.(*mem.ReadReq); ok {
		return mem.DataReadyRspBuilder{}.WithSendTime(now).WithSrc(c.top).
			WithDst(r.Src).WithRspTo(r.ID).
			WithData(make([]byte, r.AccessByteSize)).Build()
	}
	return mem.WriteDoneRspBuilder{}.WithSendTime(now).WithSrc(c.top).
		WithDst(m.Meta().Src).WithRspTo(m.Meta().ID).Build()
}
