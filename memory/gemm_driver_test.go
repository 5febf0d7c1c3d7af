package memory

import (
	"fmt"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// gemmTraffic is the tile-load traffic of a tiled fp16 GEMM (no compute):
// CTAs of BM x BN output tiles are dealt round-robin to SMs, one CTA per
// SM at a time; each CTA walks K in steps of BK, keeping at most stages
// k-steps of loads in flight (cp.async, L1 bypassed), then writes its D
// tile and, with beta, reads C through L1 first.
type gemmTraffic struct {
	m, n, k      int
	bm, bn, bk   int
	stages       int
	sparse, beta bool
	sms          int
	l2KB         int // L2 size override (0: the config's)
}

func (g gemmTraffic) String() string {
	return fmt.Sprintf("%dx%dx%d_t%dx%dx%d_s%d_sp%v_beta%v_sms%d_l2kb%d",
		g.m, g.n, g.k, g.bm, g.bn, g.bk, g.stages, g.sparse, g.beta, g.sms,
		g.l2KB)
}

// Base addresses of the operands (1 GiB apart).
const (
	baseA uint64 = iota << 30
	baseMeta
	baseB
	baseC
	baseD
)

// aRowBytes is the bytes of one row of (compressed) A over bk.
func (g gemmTraffic) aRowBytes(bk int) int {
	if g.sparse {
		return bk // bk/2 kept fp16 values
	}
	return 2 * bk
}

// run drives the traffic through h, its CTAs starting at cycle start,
// and returns the cycle of the last completion (after the final flush).
func (g gemmTraffic) run(e akita.Engine, h Hierarchy, start uint64) uint64 {
	tilesM, tilesN := g.m/g.bm, g.n/g.bn
	var end uint64
	next := 0
	var startCTA func(sm int, now uint64)
	startCTA = func(sm int, now uint64) {
		if next >= tilesM*tilesN {
			return
		}
		t := next
		next++
		c := &cta{g: g, h: h, sm: sm, tm: t / tilesN, tn: t % tilesN}
		c.finish = func(at uint64) { end = max(end, at); startCTA(sm, at) }
		c.begin(now)
	}
	launch := &launcher{cb: clock.Callbacks{Engine: e, Clock: clock.MHz(1410)}}
	launch.cb.At(launch, start, func() {
		for sm := 0; sm < g.sms; sm++ {
			startCTA(sm, start)
		}
	})
	_ = e.Run()
	h.Flush(end, func(c uint64) { end = max(end, c) })
	_ = e.Run()
	return end
}

// launcher starts the traffic from an engine event at its first cycle,
// as a kernel's first CTAs start (its clock is runGEMM's).
type launcher struct{ cb clock.Callbacks }

func (l *launcher) Handle(e akita.Event) error {
	l.cb.Fire(e)
	return nil
}

// cta is one threadblock's k-loop.
type cta struct {
	g        gemmTraffic
	h        Hierarchy
	sm       int
	tm, tn   int
	issued   int // k-steps issued
	retired  int
	inFlight int
	finish   func(uint64)
}

func (c *cta) steps() int { return c.g.k / c.g.bk }

func (c *cta) begin(now uint64) {
	if c.g.beta {
		c.h.Read(now, c.sm, CRead, c.tile(baseC), true, func(at uint64) {
			c.fill(at)
		})
		return
	}
	c.fill(now)
}

func (c *cta) tile(base uint64) Region {
	g := c.g
	return Region{Base: base + uint64(c.tm*g.bm*g.n*2+c.tn*g.bn*2),
		Rows: g.bm, RowBytes: g.bn * 2, Pitch: uint64(g.n * 2)}
}

// fill issues k-steps until stages are in flight.
func (c *cta) fill(now uint64) {
	for c.inFlight < c.g.stages && c.issued < c.steps() {
		c.issueStep(now, c.issued)
		c.issued++
		c.inFlight++
	}
}

func (c *cta) issueStep(now uint64, ks int) {
	g := c.g
	parts := 2
	aRow := g.aRowBytes(g.bk)
	aPitch := g.aRowBytes(g.k)
	a := Region{Base: baseA + uint64(c.tm*g.bm*aPitch+ks*aRow),
		Rows: g.bm, RowBytes: aRow, Pitch: uint64(aPitch)}
	b := Region{Base: baseB + uint64(ks*g.bk*g.n*2+c.tn*g.bn*2),
		Rows: g.bk, RowBytes: g.bn * 2, Pitch: uint64(g.n * 2)}
	done := func(at uint64) {
		parts--
		if parts == 0 {
			c.stepDone(at)
		}
	}
	c.h.Read(now, c.sm, AValues, a, false, done)
	if g.sparse {
		parts++
		mRow, mPitch := g.bk/8, g.k/8
		meta := Region{Base: baseMeta + uint64(c.tm*g.bm*mPitch+ks*mRow),
			Rows: g.bm, RowBytes: mRow, Pitch: uint64(mPitch)}
		c.h.Read(now, c.sm, AMeta, meta, false, done)
	}
	c.h.Read(now, c.sm, BOperand, b, false, done)
}

func (c *cta) stepDone(at uint64) {
	c.inFlight--
	c.retired++
	if c.retired == c.steps() {
		c.h.Write(at, c.sm, DWrite, c.tile(baseD), c.finish)
		return
	}
	c.fill(at)
}

// runGEMM builds a hierarchy and runs g through it.
func runGEMM(t testing.TB, cfg Config, g gemmTraffic, gran string) (uint64, Stats) {
	t.Helper()
	e := akita.NewSerialEngine()
	h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).WithConfig(cfg).WithNumSMs(g.sms).WithGranularity(gran).Build("Memory")
	if err != nil {
		t.Fatal(err)
	}
	end := g.run(e, h, 0)
	return end, h.Stats()
}
