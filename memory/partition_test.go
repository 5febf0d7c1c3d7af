package memory

import (
	"testing"

	"github.com/stcsim/stcsim/internal/clock"
)

// TestPartitionCopies: the A100's two L2 partitions each cache the lines
// their own SMs read, whatever the lines' home (docs/memory.md,
// Partitions), in both granularities. With 2 SMs, SM 0 is in partition
// 0 and SM 1 in partition 1; the line is homed in partition 1.
//   - SM 0 reads it cold: a far miss; again: a near hit on its copy.
//   - SM 1 (the home's) writes it: SM 0's copy is dropped, its next
//     read is a far hit, and that read copies it again.
//   - SM 0 writes it: accepted at half the near latency (its
//     partition takes the write), its copy is kept (the next read is
//     near), and the home holds the only dirty copy: the flush writes
//     the line back once.
func TestPartitionCopies(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	p := deriveParams(cfg, clock.MHz(1410), 2)
	far := findLine(p, 0, false)
	r := Region{Base: far * 128, Rows: 1, RowBytes: 128, Pitch: 128}
	for _, gran := range []string{"fast", "detailed"} {
		t.Run(gran, func(t *testing.T) {
			e, h := build(t, "a100-40gb", gran, 2)
			write := func(now uint64, sm int) uint64 {
				var got uint64
				h.Write(now, sm, DWrite, r, func(at uint64) { got = at })
				_ = e.Run()
				return got - now
			}
			steps := []struct {
				what string
				lat  uint64
				want float64
			}{
				{"cold read", syncRead(t, e, h, 0, 0, AValues, r, false), 410 + p.dramExtra},
				{"read again", syncRead(t, e, h, 2000, 0, AValues, r, false), 206},
				{"home writes", write(4000, 1), 103},
				{"read after the home's write", syncRead(t, e, h, 6000, 0, AValues, r, false), 410},
				{"read after the copy", syncRead(t, e, h, 8000, 0, AValues, r, false), 206},
				{"SM 0 writes", write(10000, 0), 103},
				{"read after its own write", syncRead(t, e, h, 12000, 0, AValues, r, false), 206},
			}
			for _, s := range steps {
				if float64(s.lat) < s.want || float64(s.lat) > s.want+10 {
					t.Errorf("%s: %d cycles, want %.0f (+10: the line's transfer)", s.what, s.lat, s.want)
				}
			}
			h.Flush(14000, func(uint64) {})
			_ = e.Run()
			if st := h.Stats(); st.DRAMWriteBytes != 128 || st.DRAMReadBytes != 128 {
				t.Errorf("DRAM read %d and wrote %d bytes, want 128 and 128",
					st.DRAMReadBytes, st.DRAMWriteBytes)
			}
		})
	}
}

// TestPartitionCopiesTakeRoom: a line read by SMs of both partitions
// takes room in both (fast granularity: the copies share the slices'
// sets with their own lines). Three quarters of half an L2, homed
// anywhere, read by SM 0 then again: all near hits; one and a half
// halves' worth: the second pass misses the partition (a cyclic sweep
// under LRU), and the lines homed in it come from DRAM.
func TestPartitionCopiesTakeRoom(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	half := uint64(cfg.L2.SizeKB) * 1024 / 2
	for _, c := range []struct {
		bytes    uint64
		dramRead bool
	}{{half * 3 / 4, false}, {half * 3 / 2, true}} {
		e, h := build(t, "a100-40gb", "fast", 2)
		r := Region{Base: 0, Rows: 1, RowBytes: int(c.bytes), Pitch: c.bytes}
		syncRead(t, e, h, 0, 0, BOperand, r, false)
		before := h.Stats().DRAMReadBytes
		syncRead(t, e, h, 1<<24, 0, BOperand, r, false)
		again := h.Stats().DRAMReadBytes - before
		if (again > 0) != c.dramRead {
			t.Errorf("%d MiB: the second pass read %d bytes from DRAM", c.bytes>>20, again)
		}
	}
}

// TestWarmCarriesCopies: the repeat-start replay (Warmer) leaves the
// copies an access from its SM makes: a line homed in partition 1
// warmed as SM 0's read is a near hit for SM 0; warmed as SM 1's, a far
// hit.
func TestWarmCarriesCopies(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	p := deriveParams(cfg, clock.MHz(1410), 2)
	r := Region{Base: findLine(p, 0, false) * 128, Rows: 1, RowBytes: 128, Pitch: 128}
	for sm, want := range []uint64{206, 410} {
		e, h := build(t, "a100-40gb", "fast", 2)
		h.(Warmer).Warm(sm, BOperand, r, false)
		if got := syncRead(t, e, h, 0, 0, BOperand, r, false); got < want || got > want+3 {
			t.Errorf("warmed by SM %d: %d cycles, want %d", sm, got, want)
		}
	}
}

// TestPartitionTrafficDeterministic: the same traffic through either
// granularity twice gives identical counters and cycles.
func TestPartitionTrafficDeterministic(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	g := gemmTraffic{m: 256, n: 1024, k: 128, bm: 128, bn: 128, bk: 64, stages: 4, sms: 16}
	for _, gran := range []string{"fast", "detailed"} {
		c1, s1 := runGEMM(t, cfg, g, gran)
		c2, s2 := runGEMM(t, cfg, g, gran)
		if c1 != c2 || s1 != s2 {
			t.Errorf("%s: %d then %d cycles, counters %+v then %+v", gran, c1, c2, s1, s2)
		}
	}
}
