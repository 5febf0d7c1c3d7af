package memory

import (
	"math"
	"math/bits"

	"github.com/sarchlab/akita/v3/mem/cache"
	"github.com/sarchlab/akita/v3/mem/cache/writeback"
	"github.com/sarchlab/akita/v3/mem/mem"
	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// issueWindow is how many queued requests of an SM the crossbar looks at
// per cycle (its per-slice queues).
const issueWindow = 64

// Unloaded cycles that the Akita path adds on its own (measured with
// TestUnloadedLatency): a hit's round trip through the connections and
// the writeback cache's pipeline, and the extra of a miss's fetch and
// fill. The agent and the DRAM channels subtract them so that unloaded
// latencies equal the configured ones.
const (
	akitaHitCycles  = 6
	akitaMissCycles = 8
)

// lineOp is one sector request of the detailed model.
type lineOp struct {
	slice int
	addr  uint64 // slice-local address
	bytes uint64
	write bool
	lat   float64
	xfer  *transfer
	idx   int // the line's index in its request
}

// transfer is one Read or Write: done runs when its last line arrives.
type transfer struct {
	remaining int
	finish    uint64
	done      func(cycle uint64)
	// arrive (cp.async only) is called as each line's last sector
	// reaches the SM; lineLeft counts the sectors still to come.
	arrive   func(line int, at float64)
	lineLeft []int
}

// agent stands for the SMs' side of the crossbar. Each SM's sector
// requests wait in a queue and leave at the SM's port bandwidth, each
// slice taking at most its bandwidth; responses are delayed by the rest of
// the configured latency. It ticks while it has requests to issue, and
// sleeps otherwise (woken by responses).
type agent struct {
	*akita.TickingComponent
	cb        clock.Callbacks
	p         params
	toL2      []akita.Port // one per slice, so no slice blocks another
	control   akita.Port
	slices    []*writeback.Cache
	queues    [][]*lineOp
	credit    []float64 // per SM port, bytes
	slCredit  []float64 // per L2 slice, bytes
	rr        int       // SM served first in the next tick
	portSpent []float64
	sliceReqs []uint64
	last      uint64
	inflight  map[string]*lineOp
	l1        l1Model
	classOf   map[uint64]Class
	flushTodo []int
	flushWait int
	flushDone func(uint64)

	stats        Stats
	readSectors  uint64
	writeSectors uint64
}

func newAgent(engine akita.Engine, clk clock.Clock, p params,
	classOf map[uint64]Class) *agent {
	a := &agent{cb: clock.Callbacks{Engine: engine, Clock: clk}, p: p,
		queues: make([][]*lineOp, p.numSMs), credit: make([]float64, p.numSMs),
		slCredit:  make([]float64, p.slices),
		portSpent: make([]float64, p.numSMs),
		sliceReqs: make([]uint64, p.slices),
		inflight:  map[string]*lineOp{}, classOf: classOf,
		l1: newL1Model(p)}
	a.TickingComponent = akita.NewTickingComponent(p.name+".Agent", engine,
		clk.Freq, a)
	for i := 0; i < p.slices; i++ {
		name := akita.BuildNameWithIndex(p.name+".Agent", "ToL2", i)
		port := akita.NewLimitNumMsgPort(a, 1<<12, name)
		a.AddPort(name, port)
		a.toL2 = append(a.toL2, port)
	}
	a.control = akita.NewLimitNumMsgPort(a, 1<<10, p.name+".Agent.Control")
	a.AddPort("Control", a.control)
	return a
}

// Handle runs the agent's own timed callbacks and its ticks.
func (a *agent) Handle(e akita.Event) error {
	if ev, ok := e.(*clock.Event); ok {
		ev.Fn()
		return nil
	}
	return a.TickingComponent.Handle(e)
}

func (a *agent) submit(now uint64, sm int, class Class, r Region,
	viaL1, write bool, done func(cycle uint64),
	arrive func(line int, at float64)) {
	a.stats.Requests++
	x := &transfer{remaining: 1, finish: now, done: done, arrive: arrive}
	i := 0
	r.forEachLine(a.p.lineBytes, a.p.secBytes, func(s lineSpan) {
		mask := s.mask
		if viaL1 {
			mask = a.throughL1(now, sm, class, s, x)
		}
		if arrive != nil {
			x.lineLeft = append(x.lineLeft, bits.OnesCount64(mask))
		}
		if mask != 0 {
			a.enqueue(sm, class, s.line, mask, write, x, i)
		}
		i++
	})
	a.arrive(x, now, false) // the submit's own reference
	a.wake(now)
}

// throughL1 serves a line from the SM's L1 and returns the sectors that
// missed.
func (a *agent) throughL1(now uint64, sm int, class Class, s lineSpan,
	x *transfer) uint64 {
	finish, miss := a.l1.load(float64(now), sm, class, s, &a.stats)
	x.finish = max(x.finish, uint64(math.Ceil(finish-1e-9)))
	return miss
}

// enqueue queues one request per sector: the Akita slices are built with
// sector-sized blocks, so that hits, misses and DRAM traffic are counted
// in sectors as in the fast model.
func (a *agent) enqueue(sm int, class Class, line, mask uint64, write bool,
	x *transfer, idx int) {
	sl, local := a.p.amap.slice(line)
	lat := a.p.hitLatency(sm, sl)
	a.classOf[line] = class
	for m := mask; m != 0; m &= m - 1 {
		sec := uint64(bits.TrailingZeros64(m))
		op := &lineOp{slice: sl,
			addr:  local*a.p.lineBytes + sec*a.p.secBytes,
			bytes: a.p.secBytes, write: write, lat: lat, xfer: x, idx: idx}
		a.queues[sm] = append(a.queues[sm], op)
		x.remaining++
	}
	n := uint64(bits.OnesCount64(mask))
	a.stats.L2Bytes += n * a.p.secBytes
	a.stats.PerClass[class].L2Bytes += n * a.p.secBytes
	if write {
		a.writeSectors += n
	} else {
		a.readSectors += n
	}
}

// Tick issues queued requests within each SM's port credit, then sends
// pending flush requests and drains responses.
func (a *agent) Tick(now akita.VTimeInSec) bool {
	cyc := a.cb.Clock.Cycle(now)
	progress := a.receive(now)
	progress = a.receiveControl(now) || progress
	progress = a.sendFlush(now) || progress
	progress = a.issue(now, cyc) || progress
	return progress || a.queued()
}

func (a *agent) queued() bool {
	for _, q := range a.queues {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

// issue sends queued requests. Two bandwidths bound it: each SM's
// crossbar port and each L2 slice (a request waits, blocking its SM's
// queue, until its slice has credit). SMs are served round-robin.
func (a *agent) issue(now akita.VTimeInSec, cyc uint64) bool {
	elapsed := float64(cyc - a.last)
	a.last = cyc
	for s := range a.slCredit {
		a.slCredit[s] = min(max(float64(a.p.secBytes), a.p.sliceRate),
			a.slCredit[s]+elapsed*a.p.sliceRate)
	}
	progress := false
	n := len(a.queues)
	for i := 0; i < n; i++ {
		sm := (a.rr + i) % n
		a.credit[sm] = min(max(float64(a.p.lineBytes), a.p.portRate),
			a.credit[sm]+elapsed*a.p.portRate)
		progress = a.issueSM(now, sm) || progress
	}
	a.rr = (a.rr + 1) % n
	return progress
}

// launch fills the port and slice credits at cycle at, as an idle
// cycle's refill leaves them, whatever the cycles since the last tick.
func (a *agent) launch(at uint64) {
	a.last = max(a.last, at)
	for s := range a.slCredit {
		a.slCredit[s] = max(float64(a.p.secBytes), a.p.sliceRate)
	}
	for sm := range a.credit {
		a.credit[sm] = max(float64(a.p.lineBytes), a.p.portRate)
	}
}

// sliceCost is the slice credit op takes: its bytes, a write's weighted
// by 1 / l2.write_ratio.
func (a *agent) sliceCost(op *lineOp) float64 {
	if op.write {
		return float64(op.bytes) * a.p.writeCost
	}
	return float64(op.bytes)
}

// issueSM sends an SM's queued requests while its port has credit. The
// crossbar keeps a queue per destination slice, so a request whose slice
// is busy does not block the ones behind it: the first issueWindow
// requests are scanned in order and each is sent when its slice has
// credit.
func (a *agent) issueSM(now akita.VTimeInSec, sm int) bool {
	progress := false
	q := a.queues[sm]
	for i := 0; i < len(q) && i < issueWindow && a.credit[sm] > 0; i++ {
		op := q[i]
		if op == nil || a.slCredit[op.slice] <= 0 || !a.send(now, op) {
			continue
		}
		a.credit[sm] -= float64(op.bytes)
		a.slCredit[op.slice] -= a.sliceCost(op)
		a.portSpent[sm] += float64(op.bytes) / a.p.portRate
		q[i] = nil
		progress = true
	}
	for len(q) > 0 && q[0] == nil {
		q = q[1:]
	}
	a.queues[sm] = q
	return progress
}

func (a *agent) send(now akita.VTimeInSec, op *lineOp) bool {
	dst := a.slices[op.slice].GetPortByName("Top")
	src := a.toL2[op.slice]
	var msg akita.Msg
	if op.write {
		msg = mem.WriteReqBuilder{}.WithSendTime(now).WithSrc(src).
			WithDst(dst).WithPID(1).WithAddress(op.addr).
			WithData(make([]byte, op.bytes)).Build()
	} else {
		msg = mem.ReadReqBuilder{}.WithSendTime(now).WithSrc(src).
			WithDst(dst).WithPID(1).WithAddress(op.addr).
			WithByteSize(op.bytes).Build()
	}
	if err := src.Send(msg); err != nil {
		return false
	}
	a.sliceReqs[op.slice]++
	a.inflight[msg.Meta().ID] = op
	return true
}

// receive takes responses and schedules each line's arrival at the SM
// after the rest of its latency.
func (a *agent) receive(now akita.VTimeInSec) bool {
	progress := false
	for _, p := range a.toL2 {
		progress = a.receiveFrom(now, p) || progress
	}
	return progress
}

func (a *agent) receiveFrom(now akita.VTimeInSec, p akita.Port) bool {
	progress := false
	for m := p.Retrieve(now); m != nil; m = p.Retrieve(now) {
		op := a.inflight[m.(akita.Rsp).GetRspTo()]
		delete(a.inflight, m.(akita.Rsp).GetRspTo())
		rest := op.lat - akitaHitCycles
		if op.write {
			rest = oneWay(op.lat) - akitaHitCycles
		}
		at := a.cb.Clock.Cycle(now) + uint64(max(0, math.Round(rest)))
		x, idx := op.xfer, op.idx
		a.cb.At(a, at, func() {
			a.lineArrived(x, idx, at)
			a.arrive(x, at, true)
		})
		progress = true
	}
	return progress
}

// lineArrived counts a sector of a cp.async line in and reports the line
// once all of its sectors have.
func (a *agent) lineArrived(x *transfer, idx int, at uint64) {
	if x.arrive == nil {
		return
	}
	x.lineLeft[idx]--
	if x.lineLeft[idx] == 0 {
		x.arrive(idx, float64(at))
	}
}

// arrive counts one sector (or the submit itself) in; the transfer is done
// with its last one. inEvent says the caller runs in the agent's own
// event at cycle cyc, so done may be called directly.
func (a *agent) arrive(x *transfer, cyc uint64, inEvent bool) {
	x.finish = max(x.finish, cyc)
	x.remaining--
	if x.remaining > 0 {
		return
	}
	fin := max(x.finish, a.cb.Now())
	if inEvent && fin == cyc {
		x.done(fin)
		return
	}
	a.cb.At(a, fin, func() { x.done(fin) })
}

// wake ticks the agent now (never before the engine's current time: the
// Akita side of a request may still be running when a caller's clock
// says the request is over).
func (a *agent) wake(now uint64) {
	a.TickNow(max(a.cb.Clock.Time(now), a.cb.Engine.CurrentTime()))
}

func (a *agent) flush(now uint64, done func(cycle uint64)) {
	a.flushDone = done
	a.flushWait = len(a.slices)
	for i := range a.slices {
		a.flushTodo = append(a.flushTodo, i)
	}
	a.wake(now)
}

func (a *agent) sendFlush(now akita.VTimeInSec) bool {
	progress := false
	for len(a.flushTodo) > 0 {
		dst := a.slices[a.flushTodo[0]].GetPortByName("Control")
		req := cache.FlushReqBuilder{}.WithSendTime(now).
			WithSrc(a.control).WithDst(dst).Build()
		if a.control.Send(req) != nil {
			return progress
		}
		a.flushTodo = a.flushTodo[1:]
		progress = true
	}
	return progress
}

func (a *agent) receiveControl(now akita.VTimeInSec) bool {
	progress := false
	for m := a.control.Retrieve(now); m != nil; m = a.control.Retrieve(now) {
		progress = true
		if _, ok := m.(*cache.FlushRsp); !ok {
			continue
		}
		a.flushWait--
		if a.flushWait == 0 && a.flushDone != nil {
			done := a.flushDone
			a.flushDone = nil
			c := a.cb.Clock.Cycle(now)
			a.cb.At(a, c, func() { done(c) })
		}
	}
	return progress
}

func (a *agent) maxPortBusy() float64 {
	var m float64
	for _, s := range a.portSpent {
		m = max(m, s)
	}
	return m
}

// maxSliceBusy is the busiest slice's request count times its service
// time (one sector request per slice cycle).
func (a *agent) maxSliceBusy() uint64 {
	var m uint64
	for _, n := range a.sliceReqs {
		m = max(m, n)
	}
	return uint64(float64(m)*float64(a.p.secBytes)/a.p.sliceRate + 0.5)
}
