package engine

import (
	"math/rand"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"
)

// recorder handles events by logging their ids and, from a seeded
// source, scheduling new ones at the present or a few ticks on, many of
// them at the same time, so the queues' tie order is exercised.
type recorder struct {
	e    akita.Engine
	rng  *rand.Rand
	ran  []int
	left int
}

type event struct {
	t         akita.VTimeInSec
	id        int
	secondary bool
	h         *recorder
}

func (v *event) Time() akita.VTimeInSec { return v.t }
func (v *event) Handler() akita.Handler { return v.h }
func (v *event) IsSecondary() bool      { return v.secondary }
func (r *recorder) Handle(e akita.Event) error {
	r.ran = append(r.ran, e.(*event).id)
	for n := r.rng.Intn(3); n > 0 && r.left > 0; n-- {
		r.schedule(e.Time() + akita.VTimeInSec(r.rng.Intn(4)))
	}
	return nil
}

func (r *recorder) schedule(t akita.VTimeInSec) {
	r.left--
	r.e.Schedule(&event{t: t, id: r.left, secondary: r.rng.Intn(5) == 0, h: r})
}

func runOrder(e akita.Engine, seed int64) []int {
	r := &recorder{e: e, rng: rand.New(rand.NewSource(seed)), left: 20000}
	for i := 0; i < 500; i++ {
		r.schedule(akita.VTimeInSec(r.rng.Intn(50)))
	}
	if err := e.Run(); err != nil {
		panic(err)
	}
	return r.ran
}

// TestSameOrderAsAkita: the engine runs events, same-time ones included,
// in exactly the order akita.SerialEngine does.
func TestSameOrderAsAkita(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		want := runOrder(akita.NewSerialEngine(), seed)
		got := runOrder(New(), seed)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d events run, akita ran %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: event %d is %d, akita's is %d", seed, i, got[i], want[i])
			}
		}
	}
}

// stopper stops its engine when it handles the event with id stopAt.
type stopper struct {
	e      *Serial
	stopAt int
	ran    []int
}

func (s *stopper) Handle(e akita.Event) error {
	id := e.(*stopEvent).id
	s.ran = append(s.ran, id)
	if id == s.stopAt {
		s.e.Stop()
	}
	return nil
}

// TestStopEndsRun: Stop inside a handler makes Run return after that
// event, with the later ones still queued.
func TestStopEndsRun(t *testing.T) {
	e := New()
	s := &stopper{e: e, stopAt: 3}
	for i := 0; i < 10; i++ {
		e.Schedule(&stopEvent{event{t: akita.VTimeInSec(i), id: i}, s})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(s.ran) != 4 || s.ran[3] != 3 || len(e.primary) != 6 {
		t.Fatalf("ran %v, %d left queued; want 0..3 and 6", s.ran, len(e.primary))
	}
}

type stopEvent struct {
	event
	s *stopper
}

func (v *stopEvent) Handler() akita.Handler { return v.s }
