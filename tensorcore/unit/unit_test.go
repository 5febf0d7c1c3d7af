package unit

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/tensorcore"
)

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
func play(t *testing.T, cfg tensorcore.Config, subs []sub, chain int) ([]string, Stats) {
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
				u.Submit(c, Request{Mode: tensorcore.Sparse, Precision: tensorcore.FP16, Count: 1, Done: next(k + 1)})
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
		{0, Request{Mode: tensorcore.Dense, Precision: tensorcore.FP16, Count: 3}},
		{5, Request{Mode: tensorcore.Sparse, Precision: tensorcore.FP16, Count: 2}},
		{100, Request{Mode: tensorcore.Dense, Precision: tensorcore.INT8, Count: 1}},
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

// TestFidelitiesAgreeOnOnePath: random queued runs of one datapath, and a
// dependent chain, give identical callback cycles and stats in both
// fidelities, at the defaults and with a bottleneck moved to each stage.
func TestFidelitiesAgreeOnOnePath(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	tweaks := []func(*tensorcore.PrecisionConfig){
		func(*tensorcore.PrecisionConfig) {},
		func(p *tensorcore.PrecisionConfig) { p.BOperandBytesPerClk = 24 },                  // operand read binds
		func(p *tensorcore.PrecisionConfig) { p.MetadataBitsPerClk = 40 },                   // decode binds
		func(p *tensorcore.PrecisionConfig) { p.AccumulatePerClk = 5 },                      // accumulate binds
		func(p *tensorcore.PrecisionConfig) { p.SparsePattern, p.SelectorFanIn = "2:8", 2 }, // selector passes
	}
	for trial := 0; trial < 20; trial++ {
		prec := tensorcore.Precisions[rng.Intn(4)]
		mode := tensorcore.Mode(rng.Intn(3))
		cfg := a100("")
		p, _ := cfg.Get(prec)
		tweaks[trial%len(tweaks)](p)
		if prec == tensorcore.TF32 && trial%len(tweaks) == 4 {
			p.SparsePattern = "1:2"
		}
		var subs []sub
		at := uint64(0)
		for i := 0; i < 30; i++ {
			at += uint64(rng.Intn(60))
			subs = append(subs, sub{at, Request{Mode: mode, Precision: prec,
				Count: 1 + rng.Intn(20)}})
		}
		for _, c := range []struct {
			subs  []sub
			chain int
		}{{subs, 0}, {nil, 10 + trial}} {
			cfg.Fidelity = "batched"
			lb, sb := play(t, cfg, c.subs, c.chain)
			cfg.Fidelity = "instruction"
			li, si := play(t, cfg, c.subs, c.chain)
			if !reflect.DeepEqual(lb, li) {
				t.Fatalf("trial %d (%s %s): batched\n%v\ninstruction\n%v", trial, prec, mode, lb, li)
			}
			if sb != si {
				t.Fatalf("trial %d: stats %+v vs %+v", trial, sb, si)
			}
		}
	}
}

// TestFidelitiesDifferOnSwitch: when consecutive MMAs take different
// datapaths, instruction fidelity sees the stage hazards that batched
// fidelity's single issue interval does not. A dense MMA right behind a
// sparse one would reach the shared dot-product stage 4 cycles (the
// sparse path's decode and mux fills) before the sparse MMA has left it,
// so it issues 4 cycles later than the interval says; a sparse MMA behind
// a dense one meets no such stage.
func TestFidelitiesDifferOnSwitch(t *testing.T) {
	for _, tc := range []struct {
		first, second tensorcore.Mode
		batched, inst string
	}{
		{tensorcore.Sparse, tensorcore.Dense, "00000008 issued 1", "00000012 issued 1"},
		{tensorcore.Dense, tensorcore.Sparse, "00000008 issued 1", "00000008 issued 1"},
	} {
		subs := []sub{{0, Request{Mode: tc.first, Precision: tensorcore.FP16, Count: 1}},
			{0, Request{Mode: tc.second, Precision: tensorcore.FP16, Count: 1}}}
		for f, want := range map[string]string{"batched": tc.batched, "instruction": tc.inst} {
			log, _ := play(t, a100(f), subs, 0)
			if !slices.Contains(log, want) {
				t.Errorf("%s then %s, %s: %v, want %q", tc.first, tc.second, f, log, want)
			}
		}
	}
}

func TestUnitCheck(t *testing.T) {
	u := MakeBuilder().WithEngine(akita.NewSerialEngine()).WithConfig(a100("batched")).Build("TC")
	for _, r := range []Request{{Precision: tensorcore.Precision(9), Count: 1}, {Precision: tensorcore.FP16, Count: 0},
		{Precision: tensorcore.FP16, Mode: 7, Count: 1},
		{Precision: tensorcore.FP16, Mode: tensorcore.Sparse, Pattern: tensorcore.Pattern{N: 3, M: 8}, Count: 1}} {
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
			u.Submit(0, Request{Mode: tensorcore.Sparse, Precision: tensorcore.INT8, Count: 5})
			u.Submit(0, Request{Mode: tensorcore.Dense, Precision: tensorcore.TF32, Count: 2})
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if h.issue != 7 || h.complete != 7 {
			t.Errorf("%s: %d issued, %d completed, want 7 and 7", f, h.issue, h.complete)
		}
	}
}

// TestIssueMatchesSubmit: issuing MMAs one by one with FreeAt/Issue gives
// the issue and write-back cycles of the same MMAs submitted as runs, in
// both fidelities, across a switch of datapath.
func TestIssueMatchesSubmit(t *testing.T) {
	reqs := []Request{{Mode: tensorcore.Sparse, Precision: tensorcore.FP16, Count: 1},
		{Mode: tensorcore.Dense, Precision: tensorcore.FP16, Count: 1}, {Mode: tensorcore.Dense, Precision: tensorcore.FP16, Count: 1},
		{Mode: tensorcore.Sparse, Precision: tensorcore.INT8, Count: 1}}
	for _, f := range []string{"batched", "instruction"} {
		var subs []sub
		for _, r := range reqs {
			subs = append(subs, sub{0, r})
		}
		want, _ := play(t, a100(f), subs, 0)
		u := MakeBuilder().WithEngine(akita.NewSerialEngine()).WithConfig(a100(f)).Build("TC")
		var got []string
		for i, r := range reqs {
			issued, done, err := u.Issue(0, r)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%08d issued %d", issued, i), fmt.Sprintf("%08d done %d", done, i))
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Issue %v, Submit %v", f, got, want)
		}
	}
}
