package memory

import (
	"fmt"
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// storeBurst has every SM write its share of ws bytes from cycle 0, in
// 4 KB requests, 8 in flight (a streaming store kernel), and returns
// when the last is accepted.
func storeBurst(t *testing.T, cfg Config, gran string, sms int, ws uint64) uint64 {
	t.Helper()
	e := akita.NewSerialEngine()
	h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).
		WithConfig(cfg).WithNumSMs(sms).WithGranularity(gran).Build("Memory")
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 4096
	per := ws / uint64(sms) / chunk
	var end uint64
	for sm := 0; sm < sms; sm++ {
		base, left := uint64(sm)*per*chunk, per
		var next func(at uint64)
		next = func(at uint64) {
			end = max(end, at)
			if left == 0 {
				return
			}
			left--
			h.Write(at, sm, DWrite, Region{Base: base, Rows: 1,
				RowBytes: chunk, Pitch: chunk}, next)
			base += chunk
		}
		for i := 0; i < 8; i++ {
			next(0)
		}
	}
	_ = e.Run()
	return end
}

// TestWritebackQueueBoundsStoreBursts: stores of three times the L2's
// size fill it with dirty lines and then evict one per line written.
// With the configured write-back queue the burst past the first L2-full
// runs at no more than the DRAM's bandwidth (the independent reference);
// with a queue large enough never to fill, the slices accept it faster
// than DRAM could write it; fewer entries are never faster.
func TestWritebackQueueBoundsStoreBursts(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	cfg.L2.SizeKB = 5120 // 64 KB slices: the same mechanism, an eighth of the work
	l2 := uint64(cfg.L2.SizeKB) * 1024
	ws := 3 * l2
	dramBPerClk := cfg.DRAM.BandwidthGBps * cfg.DRAM.Efficiency * 1e9 / 1410e6
	times := map[int]uint64{}
	for _, n := range []int{1, cfg.L2.WritebackEntries, 1 << 14} {
		c := cfg
		c.L2.WritebackEntries = n
		times[n] = storeBurst(t, c, "fast", 108, ws)
		t.Logf("%6d entries: %d cycles (%.0f B/clk over all of it)", n,
			times[n], float64(ws)/float64(times[n]))
	}
	// Past the first L2-full every line written evicts a dirty one: at
	// least (ws - l2) bytes cross DRAM.
	floor := float64(ws-l2) / dramBPerClk
	if got := float64(times[cfg.L2.WritebackEntries]); got < floor {
		t.Errorf("%d entries: %.0f cycles, faster than DRAM writes the "+
			"evicted %d MB (%.0f cycles)", cfg.L2.WritebackEntries, got,
			(ws-l2)>>20, floor)
	}
	if got := float64(times[1<<14]); got >= floor {
		t.Errorf("unbounded queue: %.0f cycles, not faster than DRAM "+
			"(%.0f): the queue is not what bounds the burst", got, floor)
	}
	if times[1] < times[cfg.L2.WritebackEntries] ||
		times[cfg.L2.WritebackEntries] < times[1<<14] {
		t.Errorf("fewer entries faster: %v", fmt.Sprint(times))
	}
}

// TestWriteRatioSlowsStoresOnly: stores of a tenth of the L2 (no
// evictions) from 108 SMs are slice-bound; at l2.write_ratio 0.25 the
// slices take four read slots per byte written, so the burst takes
// 2.5-4.5x as long (the ports and latency do not scale), in both
// granularities, while the same bytes read take no longer. (A tenth:
// 3.2x detailed, 2.9x fast; a fifth, 3.5x both, cost twice the time.)
func TestWriteRatioSlowsStoresOnly(t *testing.T) {
	cfg := testConfig(t, "a100-40gb")
	cfg.L2.WriteRatio = 1 // stores as fast as loads (the config's 0.44 is the A100's)
	ws := uint64(cfg.L2.SizeKB) * 1024 / 10
	slow := cfg
	slow.L2.WriteRatio = 0.25
	for _, gran := range []string{"fast", "detailed"} {
		t.Run(gran, func(t *testing.T) {
			base, got := storeBurst(t, cfg, gran, 108, ws), storeBurst(t, slow, gran, 108, ws)
			if r := float64(got) / float64(base); r < 2.5 || r > 4.5 {
				t.Errorf("write_ratio 0.25: %d cycles against %d (%.2fx), want 2.5-4.5x",
					got, base, r)
			}
		})
	}
	read := func(c Config) uint64 {
		cycles, _, _ := micro{cfg: c, clk: clock.MHz(1410), numSMs: 108}.stream(ws, false, false)
		return cycles
	}
	if base, got := read(cfg), read(slow); got != base {
		t.Errorf("reads: %d cycles at write_ratio 0.25, %d at 1", got, base)
	}
}
