package memory

import (
	"testing"

	"github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/sim/clock"
)

func TestProbeUnloaded(t *testing.T) {
	cfg := testConfig(t, "a100-80gb")
	for _, g := range []string{"fast", "detailed"} {
		e := sim.NewSerialEngine()
		h, err := New(e, clock.MHz(1410), cfg, 108, g)
		if err != nil {
			t.Fatal(err)
		}
		var lat []uint64
		var step func(i int, now uint64)
		lines := []uint64{0, 0, 1, 1, 2, 2, 3, 3}
		step = func(i int, now uint64) {
			if i == len(lines) {
				return
			}
			r := Region{Base: lines[i] * 128, Rows: 1, RowBytes: 128, Pitch: 128}
			h.Read(now, 0, BOperand, r, false, func(c uint64) {
				lat = append(lat, c-now)
				step(i+1, c)
			})
		}
		step(0, 0)
		e.Run()
		t.Logf("%s: %v %+v", g, lat, h.Stats())
	}
}

func TestProbeBW(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	for _, g := range []string{"fast", "detailed"} {
		m := micro{cfg: cfg, clk: clock.MHz(1410), numSMs: 16, gran: g}
		t.Logf("%s l2 %+v", g, m.bandwidth("l2", 4<<20, false, false))
		t.Logf("%s dram %+v", g, m.bandwidth("dram", 80<<20, false, false))
	}
}

func TestProbePhases(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	for _, g := range []string{"fast", "detailed"} {
		e := sim.NewSerialEngine()
		h, _ := New(e, clock.MHz(1410), cfg, 16, g)
		var end uint64
		run := func(at uint64, write bool, per uint64) uint64 {
			end = at
			for sm := 0; sm < 16; sm++ {
				s := &streamer{h: h, sm: sm, base: uint64(sm) * per, bytes: per, chunk: 4096, inFlight: 4}
				s.onDone = func(c uint64) { end = max(end, c) }
				if write {
					for off := uint64(0); off < per; off += 4096 {
						h.Write(at, sm, DWrite, Region{Base: 1<<30 + uint64(sm)*per + off, Rows: 1, RowBytes: 4096, Pitch: 4096}, s.onDone)
					}
					continue
				}
				s.start(at)
			}
			e.Run()
			return end
		}
		t1 := run(0, false, 64<<10)
		t2 := run(t1, false, 64<<10)
		t3 := run(t2, true, 64<<10)
		t.Logf("%s miss %d hit %d write %d", g, t1, t2-t1, t3-t2)
	}
}
