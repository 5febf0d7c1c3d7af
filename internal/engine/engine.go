// Package engine is a serial Akita engine that runs events in exactly the
// order akita.SerialEngine does, only faster: its queues keep each
// event's time beside it, so ordering the heap reads a float in place
// instead of calling Time through the interface on an event elsewhere in
// memory, and they take no lock (a serial engine's queues are touched
// only from the goroutine that runs it).
//
// Same-time events run in the order the heap happens to pop them, which
// simulated results depend on; so the heap is container/heap's
// algorithm step for step (Less is strict on time, the same swaps), and
// TestSameOrderAsAkita holds it to akita's.
//
// It knows nothing about GPUs; it must not import other stcsim packages.
package engine

import (
	"log"
	"math"
	"reflect"
	"sync"
	"sync/atomic"

	akita "github.com/sarchlab/akita/v3/sim"
)

// Serial is the engine. The zero value is not usable; call New.
type Serial struct {
	akita.HookableBase

	now       atomic.Uint64 // the current time's float bits (CurrentTime may come from another goroutine)
	primary   queue
	secondary queue

	stopped      bool // Stop was called: Run returns before its next event
	isPaused     bool
	isPausedLock sync.Mutex
	pauseLock    sync.Mutex
	runLock      sync.Mutex

	endHandlers []akita.SimulationEndHandler
}

// New makes an engine at time 0.
func New() *Serial { return &Serial{} }

// Schedule queues an event (akita.EventScheduler). One earlier than the
// present panics.
func (e *Serial) Schedule(evt akita.Event) {
	t := evt.Time()
	if t < e.CurrentTime() {
		log.Panic("scheduling an event earlier than current time")
	}
	if evt.IsSecondary() {
		e.secondary.push(t, evt)
		return
	}
	e.primary.push(t, evt)
}

// CurrentTime is the time of the event being run (akita.TimeTeller).
func (e *Serial) CurrentTime() akita.VTimeInSec {
	return akita.VTimeInSec(math.Float64frombits(e.now.Load()))
}

// Run runs every event, and those they schedule, in time order
// (secondary ones after the primary ones of their time).
func (e *Serial) Run() error {
	e.runLock.Lock()
	defer e.runLock.Unlock()
	for !e.stopped && (len(e.primary) > 0 || len(e.secondary) > 0) {
		e.pauseLock.Lock()
		t, evt := e.next()
		if now := e.CurrentTime(); t < now {
			log.Panicf("cannot run event in the past, evt %s @ %.10f, now %.10f",
				reflect.TypeOf(evt), t, now)
		}
		e.now.Store(math.Float64bits(float64(t)))
		ctx := akita.HookCtx{Domain: e, Pos: akita.HookPosBeforeEvent, Item: evt}
		e.InvokeHook(ctx)
		_ = evt.Handler().Handle(evt)
		ctx.Pos = akita.HookPosAfterEvent
		e.InvokeHook(ctx)
		e.pauseLock.Unlock()
	}
	return nil
}

// next pops the next event: the earlier queue head, the primary one on a
// tie.
func (e *Serial) next() (akita.VTimeInSec, akita.Event) {
	switch {
	case len(e.primary) == 0:
		return e.secondary.pop()
	case len(e.secondary) == 0:
		return e.primary.pop()
	case e.primary[0].t <= e.secondary[0].t:
		return e.primary.pop()
	}
	return e.secondary.pop()
}

// Stop makes Run return before its next event, leaving the rest queued.
// Only a handler that Run is running may call it (it takes no lock).
func (e *Serial) Stop() { e.stopped = true }

// Pause stops Run before its next event until Continue.
func (e *Serial) Pause() {
	e.isPausedLock.Lock()
	defer e.isPausedLock.Unlock()
	if e.isPaused {
		return
	}
	e.pauseLock.Lock()
	e.isPaused = true
}

// Continue lets a paused Run go on.
func (e *Serial) Continue() {
	e.isPausedLock.Lock()
	defer e.isPausedLock.Unlock()
	if !e.isPaused {
		return
	}
	e.pauseLock.Unlock()
	e.isPaused = false
}

// RegisterSimulationEndHandler adds a handler that Finished calls.
func (e *Serial) RegisterSimulationEndHandler(h akita.SimulationEndHandler) {
	e.endHandlers = append(e.endHandlers, h)
}

// Finished calls the simulation-end handlers with the current time.
func (e *Serial) Finished() {
	now := e.CurrentTime()
	for _, h := range e.endHandlers {
		h.Handle(now)
	}
}

// queue is a binary min-heap of events by time, moved exactly as
// container/heap moves akita's eventHeap.
type queue []item

type item struct {
	t akita.VTimeInSec
	e akita.Event
}

// push is heap.Push: append, then up.
func (q *queue) push(t akita.VTimeInSec, e akita.Event) {
	*q = append(*q, item{t, e})
	h := *q
	j := len(h) - 1
	for {
		i := (j - 1) / 2 // parent
		if i == j || !(h[j].t < h[i].t) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// pop is heap.Pop: swap the root with the last item, down over the rest,
// then take the last.
func (q *queue) pop() (akita.VTimeInSec, akita.Event) {
	h := *q
	n := len(h) - 1
	h[0], h[n] = h[n], h[0]
	i := 0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h[j2].t < h[j1].t {
			j = j2 // right child
		}
		if !(h[j].t < h[i].t) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	it := h[n]
	h[n] = item{} // drop the reference for the collector
	*q = h[:n]
	return it.t, it.e
}
