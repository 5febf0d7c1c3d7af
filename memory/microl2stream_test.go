package memory

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
)

// l2StreamModel is the a100-80gb memory tier at 1410 MHz (r > 0: with r
// as l2.write_ratio), and the config's sm.cta_launch_latency.
func l2StreamModel(t *testing.T, r float64) (micro, int) {
	t.Helper()
	ld, err := configs.Load([]string{"a100-80gb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := ld.Config.Memory
	if r > 0 {
		c.L2.WriteRatio = r
	}
	return micro{cfg: c, clk: clock.MHz(1410), numSMs: 108}, ld.Config.SM.CTALaunchLatency
}

// l2StreamGBps runs the kernel at threads x perSM and gives GB/s at
// 1410 MHz.
func l2StreamGBps(m micro, store bool, launch, threads, perSM int) float64 {
	return m.l2StreamKernel(store, launch).shape(threads, perSM).run() * 1.41
}

// a100_80.txt of RRZE-HPC gpu-benches gpu-l2-stream, the block of size
// 8063 (a 4 MB buffer), GB/s by threads x CTAs per SM: read, write.
var l2StreamMeasured = []struct {
	threads, perSM int
	read, write    float64
}{
	{96, 1, 202, 303}, // the read's line sets l2StreamThreadCycles
	{256, 2, 1002, 1434},
	{512, 2, 1798, 2540},
	{640, 2, 2123, 2595}, // the rows: read held out, store calibrates l2.write_ratio
	{768, 2, 2405, 2590},
	{1024, 2, 2860, 2427},
}

// TestL2StreamMatchesA100 holds the gpu-l2-stream model with the
// config's l2.write_ratio to a100_80.txt's occupancy sweep: up to 62.5 %
// occupancy the read kernel (bound per thread: it rises with every step)
// within 3 % and the write kernel within 5 %; from 62.5 % on, where the
// write kernel is bound by the L2's store path (flat at 2.59 TB/s on the
// hardware while the read kernel keeps rising), within 3 %. At 100 % both
// are fast on the model (read +12.8 %, write +6.6 %: docs/log/
// 2026-12-07-l2-store.md), bounded here at 15 %.
func TestL2StreamMatchesA100(t *testing.T) {
	m, launch := l2StreamModel(t, 0)
	prev := 0.0
	for _, row := range l2StreamMeasured {
		read := l2StreamGBps(m, false, launch, row.threads, row.perSM)
		write := l2StreamGBps(m, true, launch, row.threads, row.perSM)
		er, ew := read/row.read-1, write/row.write-1
		t.Logf("%4d x %d: read %.0f vs %.0f (%+.1f %%), write %.0f vs %.0f (%+.1f %%)",
			row.threads, row.perSM, read, row.read, 100*er, write, row.write, 100*ew)
		if read <= prev {
			t.Errorf("%d x %d: read %.0f GB/s not above %.0f at the step before",
				row.threads, row.perSM, read, prev)
		}
		prev = read
		boundR, boundW := 0.03, 0.05
		if row.threads >= 640 {
			boundW = 0.03
		}
		if row.threads >= 768 {
			boundR, boundW = 0.15, 0.15
		}
		if math.Abs(er) > boundR || math.Abs(ew) > boundW {
			t.Errorf("%d x %d: read %+.1f %%, write %+.1f %%: want within %.0f %% and %.0f %%",
				row.threads, row.perSM, 100*er, 100*ew, 100*boundR, 100*boundW)
		}
	}
	stream := m.bandwidth("l2", m.l2Bytes()/4, false, false).Value
	if prev > 0.7*stream {
		t.Errorf("read kernel at 100 %%: %.0f GB/s, not bound per thread (L2 streamer %.0f)",
			prev, stream)
	}
}

// TestL2StreamWriteRatioSlowsStoresOnly: a lower l2.write_ratio never
// makes the store kernel (640 x 2) faster and leaves the read kernel's
// cycles as they were; at 1.0 the store kernel overshoots the measured
// 2595 GB/s by more than 10 % (it is bound by the store path there, so
// the ratio calibrates).
func TestL2StreamWriteRatioSlowsStoresOnly(t *testing.T) {
	var prevStore, read0 float64
	for i, r := range []float64{1, 0.7, 0.44, 0.3} {
		m, launch := l2StreamModel(t, r)
		store := m.l2StreamKernel(true, launch).run()
		read := m.l2StreamKernel(false, launch).run()
		t.Logf("write_ratio %.2f: store %.0f, read %.0f GB/s", r, store*1.41, read*1.41)
		if i == 0 {
			read0 = read
			if store*1.41 < 1.1*2595 {
				t.Errorf("write_ratio 1: store kernel %.0f GB/s, not above the measured 2595 by 10 %%",
					store*1.41)
			}
		} else if store > prevStore {
			t.Errorf("write_ratio %.2f: store kernel %.0f GB/s, faster than %.0f at the ratio before",
				r, store*1.41, prevStore*1.41)
		}
		if read != read0 {
			t.Errorf("write_ratio %.2f moved the read kernel: %.1f against %.1f B/cycle", r, read, read0)
		}
		prevStore = store
	}
}

// TestMicroL2StreamShapes: MicroL2Stream at the rows' shape (640 x 2, the
// 4 MB buffer) is MicroFigure's l2_stream_store figure; with a buffer
// larger than the L2 (a100_80.txt's size 101631, 49.6 MiB, line 1229)
// the write kernel streams from DRAM, within 5 % of the measured 1894
// GB/s (the board's DRAM store rate; gpu-stream's write kernel gives the
// same 1894); a shape the kernel cannot run is refused.
func TestMicroL2StreamShapes(t *testing.T) {
	ld, err := configs.Load([]string{"a100-80gb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, clk, launch := ld.Config.Memory, clock.MHz(1410), ld.Config.SM.CTALaunchLatency
	fig, ok, err := MicroFigure(c, clk, 108, launch, "bandwidth", "l2_stream_store")
	if err != nil || !ok {
		t.Fatalf("l2_stream_store figure: %v, %v", ok, err)
	}
	rows, err := MicroL2Stream(c, clk, 108, launch, true,
		L2StreamShape{Threads: l2StreamCTAThreads, PerSM: l2StreamCTAsPerSM, Length: l2StreamLength})
	if err != nil || rows.Value != fig.Value {
		t.Errorf("the rows' shape: %.1f GB/s (%v), MicroFigure %.1f", rows.Value, err, fig.Value)
	}
	beyond, err := MicroL2Stream(c, clk, 108, launch, true, L2StreamShape{Threads: 640, PerSM: 2,
		Length: 101631*1024/16 + 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("write kernel, 49.6 MiB buffer: %.0f GB/s (measured 1894)", beyond.Value)
	if e := beyond.Value/1894 - 1; math.Abs(e) > 0.05 {
		t.Errorf("write kernel beyond the L2: %.0f GB/s, %+.1f %% from the measured 1894", beyond.Value, 100*e)
	}
	for _, s := range []L2StreamShape{{0, 2, 1 << 20}, {100, 2, 1 << 20}, {2048, 1, 1 << 20},
		{640, 0, 1 << 20}, {640, 2, 31}} {
		if _, err := MicroL2Stream(c, clk, 108, launch, true, s); err == nil {
			t.Errorf("shape %+v: no error", s)
		}
	}
}
