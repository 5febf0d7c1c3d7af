package clock

import (
	"math"
	"sync"

	akita "github.com/sarchlab/akita/v3/sim"
)

// Clock is a component's clock domain.
type Clock struct{ Freq akita.Freq }

// MHz makes a clock of the given frequency.
func MHz(mhz int) Clock { return Clock{Freq: akita.Freq(float64(mhz) * 1e6)} }

// Time is the engine time of the start of a cycle.
func (c Clock) Time(cycle uint64) akita.VTimeInSec {
	return akita.VTimeInSec(float64(cycle) / float64(c.Freq))
}

// Cycle is the cycle an engine time falls on (rounded to the nearest edge).
func (c Clock) Cycle(t akita.VTimeInSec) uint64 {
	return uint64(math.Round(float64(t) * float64(c.Freq)))
}

// Seconds converts a cycle count to seconds.
func (c Clock) Seconds(cycles uint64) float64 {
	return float64(cycles) / float64(c.Freq)
}

// Event runs Fn when handled. A component schedules Events only for
// itself (handler = the component) and runs Fn from its Handle method.
//
// It implements akita.Event itself rather than embedding akita.EventBase:
// the engine's queue reads Time on every comparison, and a field of the
// event is one memory access where the base's pointer was two; nor does
// it draw an ID from Akita's global generator (nothing reads event IDs).
type Event struct {
	time    akita.VTimeInSec
	handler akita.Handler
	Fn      func()
}

// NewEvent makes an event for handler h at time t.
func NewEvent(t akita.VTimeInSec, h akita.Handler, fn func()) *Event {
	return &Event{time: t, handler: h, Fn: fn}
}

// Time is when the event happens (akita.Event).
func (e *Event) Time() akita.VTimeInSec { return e.time }

// Handler is the component that handles it (akita.Event).
func (e *Event) Handler() akita.Handler { return e.handler }

// IsSecondary is false: clock events are primary (akita.Event).
func (e *Event) IsSecondary() bool { return false }

// Callbacks is a handler that runs Event callbacks: embed it in a
// component that only needs timed callbacks.
type Callbacks struct {
	Engine akita.Engine
	Clock  Clock
}

// At schedules fn at cycle c on handler h.
func (cb Callbacks) At(h akita.Handler, c uint64, fn func()) {
	cb.AtOffset(h, c, 0, fn)
}

// AtOffset schedules fn at fraction frac (0 <= frac < 0.5) of a cycle
// after the start of cycle c, and never before the engine's present: the
// offset orders events that share a cycle without moving them to another
// (Cycle rounds to the nearest edge), and a handler running at an offset
// may still schedule work for its own cycle.
func (cb Callbacks) AtOffset(h akita.Handler, c uint64, frac float64, fn func()) {
	t := cb.Clock.Time(c) + akita.VTimeInSec(frac/float64(cb.Clock.Freq))
	if now := cb.Engine.CurrentTime(); t < now {
		t = now
	}
	e := events.Get().(*Event)
	*e = Event{time: t, handler: h, Fn: fn}
	cb.Engine.Schedule(e)
}

// events recycles the Events that Callbacks schedule and Fire has run:
// a simulation schedules one for nearly every memory request and cycle.
var events = sync.Pool{New: func() any { return new(Event) }}

// Fire runs event e's callback (a handler's Handle for an Event it
// scheduled with At). Unless the engine has hooks, which see the event
// after its handler returns, e goes back to be reused first.
func (cb Callbacks) Fire(e akita.Event) {
	ev := e.(*Event)
	fn := ev.Fn
	if cb.Engine.NumHooks() == 0 {
		*ev = Event{}
		events.Put(ev)
	}
	fn()
}

// Now is the current cycle.
func (cb Callbacks) Now() uint64 { return cb.Clock.Cycle(cb.Engine.CurrentTime()) }
