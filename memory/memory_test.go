package memory

import (
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

func TestClassString(t *testing.T) {
	want := []string{"a_values", "a_metadata", "b", "c_read", "d_write"}
	for c := Class(0); c < NumClasses; c++ {
		if c.String() != want[c] {
			t.Errorf("%d: %q, want %q", c, c.String(), want[c])
		}
	}
	if NumClasses.String() != "unknown" {
		t.Errorf("out of range: %q", NumClasses.String())
	}
}

func TestRegionLines(t *testing.T) {
	tests := []struct {
		name  string
		r     Region
		lines []uint64
		masks []uint64
	}{
		{"one full line", Region{Base: 128, Rows: 1, RowBytes: 128, Pitch: 128},
			[]uint64{1}, []uint64{0xf}},
		{"unaligned row", Region{Base: 96, Rows: 1, RowBytes: 64, Pitch: 64},
			[]uint64{0, 1}, []uint64{0x8, 0x1}},
		{"two rows of 16 B", Region{Base: 0, Rows: 2, RowBytes: 16, Pitch: 256},
			[]uint64{0, 2}, []uint64{0x1, 0x1}},
		{"empty", Region{Rows: 0, RowBytes: 64}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var lines, masks []uint64
			tc.r.forEachLine(128, 32, func(s lineSpan) {
				lines = append(lines, s.line)
				masks = append(masks, s.mask)
			})
			if len(lines) != len(tc.lines) {
				t.Fatalf("lines %v, want %v", lines, tc.lines)
			}
			for i := range lines {
				if lines[i] != tc.lines[i] || masks[i] != tc.masks[i] {
					t.Errorf("line %d: %d/%#x, want %d/%#x", i, lines[i],
						masks[i], tc.lines[i], tc.masks[i])
				}
			}
		})
	}
}

// TestAddressMap checks that slice mapping is invertible and that the
// XOR hash spreads a power-of-two stride (a matrix column) over the
// slices while modulo mapping does not.
func TestAddressMap(t *testing.T) {
	tests := []struct {
		name      string
		xor       bool
		minSlices int
		maxSlices int
	}{
		{"xor", true, 60, 80},
		{"modulo", false, 1, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := addressMap{slices: 80, channels: 40, xor: tc.xor}
			used := map[int]bool{}
			for row := uint64(0); row < 1024; row++ {
				line := row * 4096 / 128 // 4 KiB row pitch
				s, local := m.slice(line)
				if m.lineOf(s, local) != line {
					t.Fatalf("line %d -> (%d, %d) -> %d", line, s, local,
						m.lineOf(s, local))
				}
				used[s] = true
			}
			if len(used) < tc.minSlices || len(used) > tc.maxSlices {
				t.Errorf("column over %d slices, want %d..%d", len(used),
					tc.minSlices, tc.maxSlices)
			}
			perChan := make([]int, 40)
			for line := uint64(0); line < 40*100; line++ {
				perChan[m.channel(line)]++
			}
			for c, n := range perChan {
				if n != 100 {
					t.Errorf("channel %d got %d of a 4000-line stream", c, n)
				}
			}
		})
	}
}

// sync runs one request to completion and returns its latency.
func syncRead(t *testing.T, e akita.Engine, h Hierarchy, now uint64, sm int,
	c Class, r Region, viaL1 bool) uint64 {
	t.Helper()
	var got uint64
	h.Read(now, sm, c, r, viaL1, func(at uint64) { got = at })
	_ = e.Run()
	return got - now
}

func build(t *testing.T, name, gran string, sms int) (akita.Engine, Hierarchy) {
	t.Helper()
	e := akita.NewSerialEngine()
	h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).WithConfig(testConfig(t, name)).WithNumSMs(sms).WithGranularity(gran).Build("Memory")
	if err != nil {
		t.Fatal(err)
	}
	return e, h
}

// TestL2Reuse: a tile read by one SM is an L2 hit for another.
func TestL2Reuse(t *testing.T) {
	for _, gran := range []string{"fast", "detailed"} {
		t.Run(gran, func(t *testing.T) {
			e, h := build(t, "a100-40gb", gran, 8)
			r := Region{Base: 1 << 20, Rows: 64, RowBytes: 128, Pitch: 4096}
			cold := syncRead(t, e, h, 0, 0, BOperand, r, false)
			s1 := h.Stats()
			warm := syncRead(t, e, h, 10000, 1, BOperand, r, false)
			s2 := h.Stats()
			if s1.DRAMReadBytes != r.Bytes() || s2.DRAMReadBytes != r.Bytes() {
				t.Errorf("DRAM read %d then %d, want %d once",
					s1.DRAMReadBytes, s2.DRAMReadBytes, r.Bytes())
			}
			if s2.L2HitSectors != r.Bytes()/32 || s2.L2HitRate() != 0.5 {
				t.Errorf("hits %d, rate %.2f", s2.L2HitSectors, s2.L2HitRate())
			}
			if warm >= cold {
				t.Errorf("warm %d not faster than cold %d", warm, cold)
			}
		})
	}
}

// TestUnloadedLatency: single loads see the configured latencies, in
// both granularities (hit: partition latency; miss: DRAM).
func TestUnloadedLatency(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	p := deriveParams(cfg, clock.MHz(1410), 2)
	near, far := findLine(p, 0, true), findLine(p, 0, false)
	tests := []struct {
		name      string
		line      uint64
		cold, hot float64
	}{
		{"near", near, 206 + p.dramExtra, 206},
		{"far", far, 410 + p.dramExtra, 410},
	}
	for _, gran := range []string{"fast", "detailed"} {
		for _, tc := range tests {
			t.Run(gran+"/"+tc.name, func(t *testing.T) {
				e, h := build(t, "a100-40gb", gran, 2)
				r := Region{Base: tc.line * 128, Rows: 1, RowBytes: 32, Pitch: 32}
				cold := float64(syncRead(t, e, h, 0, 0, AValues, r, false))
				hot := float64(syncRead(t, e, h, 5000, 0, AValues, r, false))
				if cold < tc.cold || cold > tc.cold+3 ||
					hot < tc.hot || hot > tc.hot+3 {
					t.Errorf("cold %.0f hot %.0f, want %.0f and %.0f (+3)",
						cold, hot, tc.cold, tc.hot)
				}
			})
		}
	}
}

func findLine(p params, sm int, near bool) uint64 {
	for l := uint64(0); ; l++ {
		s, _ := p.amap.slice(l)
		if (s/p.slicesPerPart == p.partitionOf(sm)) == near {
			return l
		}
	}
}

// TestL1 serves repeated loads through L1 from L1; cp.async bypasses it.
func TestL1(t *testing.T) {
	e, h := build(t, "a100-40gb", "fast", 1)
	r := Region{Base: 0, Rows: 8, RowBytes: 128, Pitch: 128}
	syncRead(t, e, h, 0, 0, CRead, r, true)
	hit := syncRead(t, e, h, 5000, 0, CRead, r, true)
	bypass := syncRead(t, e, h, 10000, 0, AValues, r, false)
	s := h.Stats()
	if hit != 33+8 || bypass < 206 {
		t.Errorf("L1 hit %d cycles, bypass %d", hit, bypass)
	}
	if s.L1HitSectors != 32 || s.L1MissSectors != 32 ||
		s.PerClass[CRead].L1Bytes != 2*r.Bytes() {
		t.Errorf("L1 stats %+v", s)
	}
}

// TestBandwidthSaturation: DRAM streaming reaches, and does not exceed,
// the configured bandwidth x efficiency; with few SMs the crossbar ports
// bound it instead.
func TestBandwidthSaturation(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	peak := cfg.DRAM.BandwidthGBps * cfg.DRAM.Efficiency
	tests := []struct {
		sms    int
		lo, hi float64
	}{
		{108, 0.95 * peak, 1.0 * peak},
		{4, 0, 4 * 64 * 1.41}, // 4 ports of 64 B/clk
	}
	for _, tc := range tests {
		m := micro{cfg: cfg, clk: clock.MHz(1410), numSMs: tc.sms}
		r := m.bandwidth("dram", 2*m.l2Bytes(), false, false)
		if r.Value < tc.lo || r.Value > tc.hi {
			t.Errorf("%d SMs: %.0f GB/s, want %.0f..%.0f", tc.sms, r.Value,
				tc.lo, tc.hi)
		}
	}
}

// TestPerClassAccounting: per-class traffic sums to the totals, and the
// write-back of D is charged to d_write.
func TestPerClassAccounting(t *testing.T) {
	for _, gran := range []string{"fast", "detailed"} {
		t.Run(gran, func(t *testing.T) {
			e, h := build(t, "a100-40gb", gran, 4)
			tile := func(base uint64) Region {
				return Region{Base: base, Rows: 16, RowBytes: 256, Pitch: 1024}
			}
			syncRead(t, e, h, 0, 0, AValues, tile(0), false)
			syncRead(t, e, h, 1000, 1, AMeta, tile(1<<20), false)
			syncRead(t, e, h, 2000, 2, BOperand, tile(2<<20), false)
			syncRead(t, e, h, 3000, 3, CRead, tile(3<<20), true)
			h.Write(4000, 3, DWrite, tile(4<<20), func(uint64) {})
			_ = e.Run()
			h.Flush(5000, func(uint64) {})
			_ = e.Run()
			s := h.Stats()
			var sum ClassStats
			for c := Class(0); c < NumClasses; c++ {
				pc := s.PerClass[c]
				sum.L2Bytes += pc.L2Bytes
				sum.DRAMReadBytes += pc.DRAMReadBytes
				sum.DRAMWriteBytes += pc.DRAMWriteBytes
				if pc.L2Bytes != 4096 {
					t.Errorf("%s: L2 bytes %d, want 4096", c, pc.L2Bytes)
				}
			}
			if sum.L2Bytes != s.L2Bytes || sum.DRAMReadBytes != s.DRAMReadBytes ||
				sum.DRAMWriteBytes != s.DRAMWriteBytes {
				t.Errorf("per class %+v, totals %+v", sum, s)
			}
			if s.PerClass[DWrite].DRAMWriteBytes != 4096 ||
				s.DRAMReadBytes != 4*4096 || s.MetadataBytes() != 4096 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	bad := cfg
	bad.L2.BytesPerClk = 0
	tests := []struct {
		name string
		cfg  Config
		sms  int
		gran string
	}{
		{"granularity", cfg, 4, "exact"},
		{"sms", cfg, 0, "fast"},
		{"config", bad, 4, "fast"},
	}
	for _, tc := range tests {
		b := MakeBuilder().WithEngine(akita.NewSerialEngine()).
			WithFreq(clock.MHz(1410).Freq).WithConfig(tc.cfg).
			WithNumSMs(tc.sms).WithGranularity(tc.gran)
		if _, err := b.Build("Memory"); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := MakeBuilder().WithConfig(cfg).Build("Memory"); err == nil {
		t.Error("no engine: no error")
	}
}

func TestCalendarOrder(t *testing.T) {
	c := newCalendars(1, 64)[0]
	late := c.reserve(1000, 128)
	early := c.reserve(10, 128)
	if early > 20 || late < 1000 {
		t.Errorf("early %.1f, late %.1f: an early line waited", early, late)
	}
	var end float64
	for i := 0; i < 100; i++ {
		end = c.reserve(0, 64)
	}
	if end != 102 { // 128 B booked earlier + 6400 B at 64 B/clk
		t.Errorf("100 x 64 B at 64 B/clk after 128 B ended at %.1f, want 102", end)
	}
}
