package gpu

import "github.com/stcsim/stcsim/sim/sm"

// dispatcher is the GPU's CTA dispatcher (NVIDIA's compute work
// distributor): it hands CTAs to SMs one at a time, at most one every
// sm.cta_dispatch_interval cycles GPU-wide and at most one per SM per
// cycle (GPGPU-Sim's and Accel-Sim's rule). Requests are served in the
// order they are made; the launches it schedules run in (cycle,
// sequence) order from one engine event per cycle, so CTAs that start on
// the same cycle start in dispatch order, not in the engine heap's.
type dispatcher struct {
	interval uint64
	free     uint64   // the next cycle the dispatcher can hand out a CTA
	smFree   []uint64 // the next cycle each SM accepts one
	pending  sm.SeqHeap[launch]
	armed    uint64 // cycle of the pending engine event (never: none)
}

// launch is one CTA that the dispatcher has handed to an SM.
type launch struct {
	sm  *sm.SM
	idx int
}

func newDispatcher(interval, sms int) *dispatcher {
	return &dispatcher{interval: uint64(interval), smFree: make([]uint64, sms),
		armed: sm.Never}
}

// dispatch hands CTA idx to sm no earlier than cycle at (when its slot is
// free) and returns the cycle it leaves the dispatcher.
func (d *dispatcher) dispatch(sm *sm.SM, at uint64) uint64 {
	c := max(at, d.free, d.smFree[sm.ID])
	d.free = c + d.interval
	d.smFree[sm.ID] = c + 1
	return c
}

// dispatchAt dispatches the next CTA to sm once its slot frees at cycle
// at; the CTA starts delay cycles after it leaves the dispatcher (plus
// the ensemble's dispatch offset).
func (g *GPU) dispatchAt(sm *sm.SM, at, delay uint64) {
	c := g.disp.dispatch(sm, at) + delay + g.jitter.dispatchOffset()
	d := g.disp
	d.pending.Push(c, launch{sm: sm, idx: g.nextCTA})
	g.nextCTA++
	if c < d.armed {
		d.armed = c
		sm.At(c, func() { g.runLaunches(c) })
	}
}

// runLaunches starts every CTA due at cycle c, in dispatch order, and
// arms the event of the next due cycle.
func (g *GPU) runLaunches(c uint64) {
	d := g.disp
	if d.armed != c {
		return // superseded by an earlier event
	}
	d.armed = sm.Never
	for d.pending.Len() > 0 && d.pending.Min() <= c {
		_, l := d.pending.Pop()
		if g.onStart != nil {
			g.onStart(l.idx, c)
		}
		l.sm.Start(c, l.idx)
	}
	if d.pending.Len() > 0 {
		next := d.pending.Min()
		d.armed = next
		g.sms[0].At(next, func() { g.runLaunches(next) })
	}
}
