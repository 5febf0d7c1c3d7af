package memory

import (
	"fmt"
	"github.com/stcsim/stcsim/memory/smem"
	"math"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// TestFillPlanPackets: a line's data arrives in packets of the crossbar
// port's width; each packet is one store of its 16-B vectors, which the
// crosswise swizzle keeps conflict-free (one wavefront). 128 rows of
// 128 B (fp16, K = 64) are 128 lines: 2 packets each at 64 B, 1 at
// 128 B. Rows of 64 B (K = 32) fill half a line each: one packet per
// line whatever the width, so half of each wavefront is wasted.
func TestFillPlanPackets(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	for _, tc := range []struct {
		name     string
		packet   int
		r        Region
		l        smem.Layout
		packets  int
		wavefrnt int
	}{
		{"128-B rows, 64-B packets", 64,
			Region{Rows: 128, RowBytes: 128, Pitch: 4096}, cw64, 256, 256},
		{"128-B rows, 128-B packets", 128,
			Region{Rows: 128, RowBytes: 128, Pitch: 4096}, cw64, 128, 128},
		{"128-B rows, 32-B packets", 32,
			Region{Rows: 128, RowBytes: 128, Pitch: 4096}, cw64, 512, 512},
		{"64-B rows, 64-B packets", 64,
			Region{Rows: 128, RowBytes: 64, Pitch: 4096}, cw32, 128, 128},
		{"64-B rows, 128-B packets", 128,
			Region{Rows: 128, RowBytes: 64, Pitch: 4096}, cw32, 128, 128},
		{"metadata block, contiguous", 64,
			Region{Rows: 1, RowBytes: 1024, Pitch: 1024},
			smem.Layout{Kind: smem.ColumnMajor, ElemBits: 16, Contig: 512}, 16, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.Crossbar.PortBytesPerClk = tc.packet
			p := NewFiller(c).Plan(tc.r, tc.l)
			if p.Packets != tc.packets || p.Wavefronts != tc.wavefrnt ||
				p.Bytes != tc.r.Rows*tc.r.RowBytes {
				t.Errorf("%d packets, %d wavefronts, %d B; want %d, %d, %d",
					p.Packets, p.Wavefronts, p.Bytes, tc.packets, tc.wavefrnt,
					tc.r.Rows*tc.r.RowBytes)
			}
		})
	}
}

// fillTime runs one 16 KiB cp.async stage (128 rows of 128 B) into an
// SM's shared memory while the SM's warps load fragments from it (loads
// LDSM wavefronts issued with the fill), and returns the cycles until the
// stage is written and the loads are done (in the fast granularity the
// packets keep the cycles they arrive in and the loads take the rest; in
// the detailed one a packet is booked when it arrives).
func fillTime(t *testing.T, cfg Config, gran string, loads int) uint64 {
	t.Helper()
	e := akita.NewSerialEngine()
	h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).
		WithConfig(cfg).WithGranularity(gran).Build("Memory")
	if err != nil {
		t.Fatal(err)
	}
	f := NewFiller(cfg)
	s := smem.NewSharedMemory(cfg.SharedMemory)
	r := Region{Base: 1 << 20, Rows: 128, RowBytes: 128, Pitch: 8192}
	var d FillDone
	f.CpAsync(h, s, 0, 0, BOperand, r, f.Plan(r, cw64), func(x FillDone) { d = x })
	var last uint64
	for i := 0; i < loads/4; i++ {
		last = s.Access(uint64(i), smem.Pattern{BytesPerInstr: 512, Wavefronts: 4}, 512)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if d.Written == 0 || d.Written < d.Arrived || d.Unqueued > d.Written {
		t.Fatalf("fill outcome %+v", d)
	}
	return max(d.Written, last) - d.Issued
}

// TestFillTimeMonotone: the fill rate is what the crossbar's packets and
// the bank array's contention give. Wider packets (and port) are never
// slower; a narrower bank array is never faster; more competing loads are
// never faster; in both granularities and under both arbitrations. Under
// loads_first the two granularities book the same packets after the same
// loads and agree within 2 %.
func TestFillTimeMonotone(t *testing.T) {
	seen := map[string]uint64{}
	for _, run := range []struct{ gran, arb string }{{"fast", LoadsFirst},
		{"fast", FillsFirst}, {"detailed", LoadsFirst}} {
		base := testConfig(t, "a100-40gb")
		base.SharedMemory.FillArbitration = run.arb
		gran := run.gran + "/" + run.arb
		check := func(what string, vals []int, set func(*Config, int) int,
			wider bool) {
			var prev uint64
			for i, v := range vals {
				c := base
				loads := set(&c, v)
				got := fillTime(t, c, run.gran, loads)
				t.Logf("%s %s=%d: %d cycles", gran, what, v, got)
				key := fmt.Sprintf("%s %s=%d", run.arb, what, v)
				if f, ok := seen[key]; ok && math.Abs(float64(got)/float64(f)-1) > 0.02 {
					t.Errorf("%s: detailed %d cycles, fast %d", key, got, f)
				}
				seen[key] = got
				if i > 0 && ((wider && got > prev) || (!wider && got < prev)) {
					t.Errorf("%s: %s %d -> %d moved the fill from %d to %d "+
						"cycles", gran, what, vals[i-1], v, prev, got)
				}
				prev = got
			}
		}
		check("crossbar.port_bytes_per_clk", []int{32, 64, 128},
			func(c *Config, v int) int { c.Crossbar.PortBytesPerClk = v; return 256 },
			true)
		check("shared_memory.bytes_per_clk", []int{32, 64, 128},
			func(c *Config, v int) int { c.SharedMemory.BytesPerClk = v; return 256 },
			true)
		check("competing wavefronts", []int{0, 512, 2048},
			func(_ *Config, v int) int { return v }, false)
	}
}

// stubHier delivers every line of a cp.async at one cycle, and calls
// done only when told (so that a test can book loads in between).
type stubHier struct {
	Hierarchy
	at   float64
	done func()
}

func (h *stubHier) CpAsync(now uint64, sm int, class Class, r Region,
	arrive func(int, float64), done func(uint64, ReadInfo)) {
	n := 0
	r.forEachLine(128, 32, func(lineSpan) { arrive(n, h.at); n++ })
	h.done = func() { done(uint64(h.at), ReadInfo{}) }
}

// TestFillArbitration: one 128-B line (two 64-B packets, one wavefront
// each) arrives at cycle 5 while a load of 8 wavefronts issued at cycle
// 2 wants cycles 2-9. fills_first: the packets keep cycles 5 and 6, the
// load takes 2-4 and 7-11 (done 12 + latency); loads_first: the load
// keeps 2-9 and the packets wait for 10 and 11 (written 12).
func TestFillArbitration(t *testing.T) {
	for _, tc := range []struct {
		arb           string
		load, written uint64
	}{{FillsFirst, 12 + 23, 7}, {LoadsFirst, 10 + 23, 12}} {
		cfg := testConfig(t, "a100-40gb")
		cfg.SharedMemory.FillArbitration = tc.arb
		s := smem.NewSharedMemory(cfg.SharedMemory)
		f := NewFiller(cfg)
		h := &stubHier{at: 5}
		r := Region{Base: 1 << 20, Rows: 1, RowBytes: 128, Pitch: 128}
		var d FillDone
		f.CpAsync(h, s, 0, 0, BOperand, r, f.Plan(r, cw64), func(x FillDone) { d = x })
		load := s.Access(2, smem.Pattern{BytesPerInstr: 512, Wavefronts: 4}, 1024)
		h.done()
		if load != tc.load || d.Written != tc.written || d.Unqueued != 7 {
			t.Errorf("%s: load done %d, fill written %d (unqueued %d); "+
				"want %d, %d (7)", tc.arb, load, d.Written, d.Unqueued,
				tc.load, tc.written)
		}
	}
}

// TestFillCause: the cause a stage's fill reports, on cases whose answer
// is known by construction (fast granularity, a100-40gb): a cold region
// on an idle GPU waits for DRAM's latency, the same region again for
// L2's; 108 SMs reading cold regions at once queue at the DRAM channels;
// one SM's fourth back-to-back warm request queues at its crossbar port;
// a bank array at a quarter width behind a burst of loads holds the writes.
func TestFillCause(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	const sms = 108
	type fill struct {
		sm   int
		base uint64
	}
	run := func(c Config, warm bool, fills []fill, loads int) FillDone {
		e := akita.NewSerialEngine()
		h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).
			WithConfig(c).WithNumSMs(sms).Build("Memory")
		if err != nil {
			t.Fatal(err)
		}
		f := NewFiller(c)
		s := make([]*smem.SharedMemory, sms)
		for i := range s {
			s[i] = smem.NewSharedMemory(c.SharedMemory)
		}
		region := func(base uint64) Region {
			return Region{Base: base, Rows: 128, RowBytes: 128, Pitch: 128}
		}
		if warm {
			for _, x := range fills {
				h.Read(0, x.sm, BOperand, region(x.base), false, func(uint64) {})
			}
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
		}
		now := e.CurrentTime()
		start := clock.MHz(1410).Cycle(now) + 1
		var last FillDone
		for _, x := range fills {
			r := region(x.base)
			f.CpAsync(h, s[x.sm], start, x.sm, BOperand, r, f.Plan(r, cw64),
				func(d FillDone) {
					if d.Written >= last.Written {
						last = d
					}
				})
		}
		for i := 0; i < loads; i++ {
			s[0].Access(start, smem.Pattern{BytesPerInstr: 512, Wavefronts: 4}, 512)
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return last
	}
	one := []fill{{0, 1 << 24}}
	var all, backToBack []fill
	for i := 0; i < sms; i++ {
		all = append(all, fill{i, uint64(i+1) << 24})
	}
	for i := 0; i < 4; i++ {
		backToBack = append(backToBack, fill{0, uint64(i+1) << 24})
	}
	narrow := cfg
	narrow.SharedMemory.BytesPerClk = 32
	for _, tc := range []struct {
		name  string
		c     Config
		warm  bool
		fills []fill
		loads int
		want  Cause
	}{
		{"cold, idle", cfg, false, one, 0, CauseDRAMLatency},
		{"warm, idle", cfg, true, one, 0, CauseL2Latency},
		{"cold, every SM", cfg, false, all, 0, CauseDRAMBandwidth},
		{"warm, four back to back", cfg, true, backToBack, 0, CauseCrossbar},
		{"warm, narrow bank array behind loads", narrow, true, one, 256, CauseSmem},
	} {
		d := run(tc.c, tc.warm, tc.fills, tc.loads)
		if got := d.Cause(); got != tc.want {
			t.Errorf("%s: %v (fill %+v, unloaded %.0f, queued %.0f), want %v",
				tc.name, got, d, d.Info.Unloaded(), d.Info.Queued(), tc.want)
		}
	}
}

// fp16 tiles of a TN GEMM: 128-B rows (kFactor 1) and 64-B rows, two to
// a 128-B line (smem's tests use the same two).
var (
	cw64 = smem.OperandLayout(16, 64)
	cw32 = smem.OperandLayout(16, 32)
)
