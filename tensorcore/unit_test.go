package tensorcore

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// LoadConfig returns the tensor-core section of a built-in config. The
// tests of this package cannot import configs (configs imports
// tensorcore), so loader_test.go, in the external test package, sets it to
// configs.Load: every test config comes through the real loader.
var LoadConfig func(name string) (Config, error)

// a100 is the a100-40gb tensor-core section at the given fidelity.
func a100(fidelity string) Config {
	cfg, err := LoadConfig("a100-40gb")
	if err != nil {
		panic(err)
	}
	cfg.Fidelity = fidelity
	return cfg
}

// driver submits requests from its own events, as the SM model will.
type driver struct {
	engine akita.Engine
	clk    clock.Clock
	log    []string
}

func (d *driver) Handle(e akita.Event) error { e.(*clock.Event).Fn(); return nil }

func (d *driver) at(c uint64, fn func()) { d.engine.Schedule(clock.NewEvent(d.clk.Time(c), d, fn)) }

type sub struct {
	at  uint64
	req Request
}

// play runs the submissions on a fresh unit and returns the callback log
// (sorted) and the stats.
func play(t *testing.T, cfg Config, subs []sub, chain int) ([]string, Stats) {
	t.Helper()
	e := akita.NewSerialEngine()
	clk := clock.MHz(1410)
	u := MakeBuilder().WithEngine(e).WithFreq(clk.Freq).WithConfig(cfg).Build("GPU.SM[0].TC[0]")
	d := &driver{engine: e, clk: clk}
	// Same-cycle submissions go in one event: Akita orders events of one
	// time arbitrarily, and FIFO order must be the submission order.
	byCycle := map[uint64][]Request{}
	for i, s := range subs {
		i, r := i, s.req
		r.Issued = func(c uint64) { d.log = append(d.log, fmt.Sprintf("%08d issued %d", c, i)) }
		r.Done = func(c uint64) { d.log = append(d.log, fmt.Sprintf("%08d done %d", c, i)) }
		byCycle[s.at] = append(byCycle[s.at], r)
	}
	for c, rs := range byCycle {
		c, rs := c, rs
		d.at(c, func() {
			for _, r := range rs {
				u.Submit(c, r)
			}
		})
	}
	// A dependent chain: each MMA submitted when the previous is done.
	var next func(k int) func(uint64)
	next = func(k int) func(uint64) {
		return func(c uint64) {
			d.log = append(d.log, fmt.Sprintf("%08d chain %d", c, k))
			if k < chain {
				u.Submit(c, Request{Mode: Sparse, Precision: FP16, Count: 1, Done: next(k + 1)})
			}
		}
	}
	if chain > 0 {
		d.at(0, func() { next(0)(0) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(d.log)
	return d.log, u.Stats()
}

func TestUnitTiming(t *testing.T) {
	subs := []sub{
		{0, Request{Mode: Dense, Precision: FP16, Count: 3}},
		{5, Request{Mode: Sparse, Precision: FP16, Count: 2}},
		{100, Request{Mode: Dense, Precision: INT8, Count: 1}},
	}
	want := []string{
		"00000016 issued 0", // issues at 0, 8, 16
		"00000032 issued 1", // queued: issues at 24, 32
		"00000048 done 0",   // 16 + 32
		"00000068 done 1",   // 32 + 36
		"00000100 issued 2", // unit idle again
		"00000132 done 2",
	}
	for _, f := range []string{"batched", "instruction"} {
		log, st := play(t, a100(f), subs, 0)
		if !reflect.DeepEqual(log, want) {
			t.Errorf("%s: log\n%v\nwant\n%v", f, log, want)
		}
		wantStats := Stats{
			ModeStats: ModeStats{Instructions: 6, BusyCycles: 48,
				ActualFMAs: 3*2048 + 2*2048 + 4096, DenseEquivFMAs: 3*2048 + 2*4096 + 4096},
			Dense:  ModeStats{Instructions: 4, BusyCycles: 32, ActualFMAs: 3*2048 + 4096, DenseEquivFMAs: 3*2048 + 4096},
			Sparse: ModeStats{Instructions: 2, BusyCycles: 16, ActualFMAs: 2 * 2048, DenseEquivFMAs: 2 * 4096},
		}
		if st != wantStats {
			t.Errorf("%s: stats %+v, want %+v", f, st, wantStats)
		}
	}
}

// TestFidelitiesAgree: random queued runs of every precision and mode, and
// a dependent chain, give identical callback cycles and stats.
func TestUnitChainLatency(t *testing.T) {
	want := []string{"00000000 chain 0", "00000036 chain 1", "00000072 chain 2", "00000108 chain 3"}
	for _, f := range []string{"batched", "instruction"} {
		if log, _ := play(t, a100(f), nil, 3); !reflect.DeepEqual(log, want) {
			t.Errorf("%s: %v, want %v", f, log, want)
		}
	}
}

func TestFidelitiesAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for trial := 0; trial < 20; trial++ {
		var subs []sub
		at := uint64(0)
		for i := 0; i < 30; i++ {
			at += uint64(rng.Intn(60))
			subs = append(subs, sub{at, Request{Mode: Mode(rng.Intn(2)),
				Precision: Precisions[rng.Intn(4)], Count: 1 + rng.Intn(20)}})
		}
		cfg := a100("")
		if trial%2 == 1 { // uneven stages and intervals
			cfg.FP16.SparseLatency, cfg.FP16.SparseStages = 41, 7
			cfg.INT8.DenseLatency, cfg.INT8.DenseStages = 29, 3
		}
		// The chain runs alone: a chain submission and a driver submission
		// in the same cycle come from two handlers, which Akita orders
		// arbitrarily, so mixing them would test the engine, not the unit.
		for _, c := range []struct {
			subs  []sub
			chain int
		}{{subs, 0}, {nil, 10 + trial}} {
			cfg.Fidelity = "batched"
			lb, sb := play(t, cfg, c.subs, c.chain)
			cfg.Fidelity = "instruction"
			li, si := play(t, cfg, c.subs, c.chain)
			if !reflect.DeepEqual(lb, li) {
				t.Fatalf("trial %d: batched\n%v\ninstruction\n%v", trial, lb, li)
			}
			if sb != si {
				t.Fatalf("trial %d: stats %+v vs %+v", trial, sb, si)
			}
		}
	}
}

func TestStages(t *testing.T) {
	p := a100("batched").FP16
	sum := func(s []Stage) (n int) {
		for _, x := range s {
			n += x.Cycles
		}
		return n
	}
	d, s := DenseStages(&p), SparseStages(&p)
	if len(d) != 4 || sum(d) != 32 || len(s) != 6 || sum(s) != 36 {
		t.Fatalf("dense %v, sparse %v", d, s)
	}
	if s[1].Name != "metadata decode" || s[2].Name != "selector mux" || s[1].Cycles != 2 {
		t.Errorf("sparse front stages %v", s)
	}
	p.SparseLatency, p.SparseStages = 33, 7 // 1 extra cycle, 3 extra stages
	if s := SparseStages(&p); len(s) != 7 || sum(s) != 33 {
		t.Errorf("fallback split %v", s)
	}
}

func TestUnitCheck(t *testing.T) {
	u := MakeBuilder().WithEngine(akita.NewSerialEngine()).WithConfig(a100("batched")).Build("TC")
	for _, r := range []Request{{Precision: Precision(7), Count: 1}, {Precision: FP16, Count: 0},
		{Precision: FP16, Mode: 7, Count: 1}} {
		if u.Check(r) == nil {
			t.Errorf("accepted %+v", r)
		}
	}
}

type countHook struct{ issue, complete int }

func (h *countHook) Func(ctx akita.HookCtx) {
	it := ctx.Item.(HookItem)
	if ctx.Pos == HookPosIssue {
		h.issue += it.Count
	} else {
		h.complete += it.Count
	}
}

// TestHooks: both fidelities report every MMA's issue and completion.
func TestHooks(t *testing.T) {
	for _, f := range []string{"batched", "instruction"} {
		e := akita.NewSerialEngine()
		u := MakeBuilder().WithEngine(e).WithConfig(a100(f)).Build("TC")
		h := &countHook{}
		u.AcceptHook(h)
		d := &driver{engine: e, clk: clock.Clock{Freq: 1 * akita.GHz}}
		d.at(0, func() {
			u.Submit(0, Request{Mode: Sparse, Precision: INT8, Count: 5})
			u.Submit(0, Request{Mode: Dense, Precision: TF32, Count: 2})
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if h.issue != 7 || h.complete != 7 {
			t.Errorf("%s: %d issued, %d completed, want 7 and 7", f, h.issue, h.complete)
		}
	}
}
