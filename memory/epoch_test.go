package memory

import (
	"math"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// The same traffic started at any cycle takes the same cycles and counts
// the same: the shared servers' booking windows are counted from the
// kernel's launch, not from cycle 0. Both granularities, with DRAM reads,
// dirty write-backs during the run (an L2 of 320 KiB) and the final
// flush, and a C read through L1.
func TestTrafficIndependentOfItsStartCycle(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	cases := []struct {
		g    gemmTraffic
		gran string
	}{
		{gemmTraffic{m: 512, n: 512, k: 512, bm: 128, bn: 128, bk: 64, stages: 2,
			sms: 4, l2KB: 320, beta: true}, Fast},
		{gemmTraffic{m: 512, n: 256, k: 512, bm: 128, bn: 128, bk: 128, stages: 3,
			sparse: true, sms: 8}, Fast},
		{gemmTraffic{m: 256, n: 512, k: 128, bm: 128, bn: 64, bk: 64, stages: 4,
			sms: 8, l2KB: 320, beta: true}, Detailed},
	}
	for _, c := range cases {
		t.Run(c.gran+"_"+c.g.String(), func(t *testing.T) {
			if c.gran == Detailed && testing.Short() {
				t.Skip("detailed memory model")
			}
			cf := cfg
			if c.g.l2KB > 0 {
				cf.L2.SizeKB = c.g.l2KB
			}
			var base uint64
			var baseStats Stats
			for i, start := range []uint64{0, 1, 7, 15, 2890, 100003} {
				e := akita.NewSerialEngine()
				h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).
					WithConfig(cf).WithNumSMs(c.g.sms).WithGranularity(c.gran).Build("Memory")
				if err != nil {
					t.Fatal(err)
				}
				h.Launch(start)
				cycles := c.g.run(e, h, start) - start
				st := h.Stats()
				if i == 0 {
					base, baseStats = cycles, st
					t.Logf("%d cycles, DRAM r %d w %d", cycles, st.DRAMReadBytes, st.DRAMWriteBytes)
					continue
				}
				if cycles != base {
					t.Errorf("started at cycle %d: %d cycles, %d started at 0", start, cycles, base)
				}
				if st != baseStats {
					t.Errorf("started at cycle %d: stats %+v, %+v started at 0", start, st, baseStats)
				}
			}
		})
	}
}

// A launch counts the windows from a new epoch but keeps what was booked
// before it: a backlog of 100 KiB at 64 B/clk from cycle 0 still delays
// a booking after a launch at cycle 507 (off the old grid) as it did
// without the launch, to within a window, and no window holds more than
// its capacity.
func TestCalendarLaunchKeepsTheBacklog(t *testing.T) {
	const rate = 64
	book := func(c *calendar) {
		for i := 0; i < 1600; i++ {
			c.reserve(float64(i%400), 64)
		}
	}
	kept, moved := newCalendars(1, rate)[0], newCalendars(1, rate)[0]
	book(&kept)
	book(&moved)
	moved.launch(507)
	for s := range moved.used {
		if moved.used[s] > rate*calendarWidth+1e-9 {
			t.Fatalf("window %d holds %.1f B, over its %d", moved.win[s], moved.used[s], rate*calendarWidth)
		}
	}
	// 102400 B at 64 B/clk: busy to cycle 1600.
	want, got := kept.reserve(507, 6400), moved.reserve(507, 6400)
	if got < 1700 || math.Abs(got-want) > calendarWidth {
		t.Errorf("6400 B at cycle 507 after a launch there: done at %.1f, %.1f without it (the backlog ends at 1600)",
			got, want)
	}
}

// A kernel launched on a hierarchy whose DRAM channels still write the
// previous kernel's dirty lines waits for them as it would without the
// launch's new epoch (to within a window): the flush's bookings are kept.
func TestLaunchKeepsQueuedWriteBacks(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	cfg.L2.SizeKB = 5120
	read := func(launch, busy bool) uint64 {
		e := akita.NewSerialEngine()
		h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).
			WithConfig(cfg).WithNumSMs(16).Build("Memory")
		if err != nil {
			t.Fatal(err)
		}
		const chunk = 64 << 10
		if busy {
			for i := 0; i < 64; i++ { // 4 MiB of dirty lines, 80 % of the L2
				h.Write(0, i%16, DWrite, Region{Base: uint64(i) * chunk, Rows: 1, RowBytes: chunk, Pitch: chunk},
					func(uint64) {})
			}
		}
		_ = e.Run()
		at := uint64(30003)
		h.Flush(at, func(uint64) {})
		if launch {
			h.Launch(at)
		}
		var done uint64
		h.Read(at, 0, BOperand, Region{Base: 1 << 30, Rows: 64, RowBytes: 1024, Pitch: 1024}, false,
			func(c uint64) { done = c })
		_ = e.Run()
		return done - at
	}
	idle, kept, launched := read(true, false), read(false, true), read(true, true)
	t.Logf("64 KiB read from DRAM: %d cycles idle, %d behind the flush, %d behind it after a launch",
		idle, kept, launched)
	if kept < 2*idle {
		t.Fatalf("the flush did not delay the read (%d cycles against %d idle): no backlog to keep", kept, idle)
	}
	if d := int64(launched) - int64(kept); d < -calendarWidth || d > calendarWidth {
		t.Errorf("after the launch the read took %d cycles, %d without it", launched, kept)
	}
}
