package memory

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
)

// l2StreamModel is the a100-80gb memory tier at 1410 MHz, with R as
// l2.write_ratio, and the config's sm.cta_launch_latency.
func l2StreamModel(t *testing.T, r float64) (micro, uint64) {
	t.Helper()
	ld, err := configs.Load([]string{"a100-80gb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := ld.Config.Memory
	c.L2.WriteRatio = r
	return micro{cfg: c, clk: clock.MHz(1410), numSMs: 108},
		uint64(ld.Config.SM.CTALaunchLatency)
}

// gbps is a bytes-per-cycle figure at 1410 MHz in GB/s.
func gbps(bpc float64) float64 { return bpc * 1.41 }

// TestL2StreamReadIsBoundPerThread holds the gpu-l2-stream read kernel's
// model to what a100_80.txt shows (size 8063 block): bound per thread,
// not by the L2: its bandwidth rises with every step of occupancy (1798,
// 2123, 2405, 2860 GB/s at 512-1024 threads x 2), and at 100 % it stays
// under 0.6 of the L2's streaming figure (2860 against bw-l2's 5400).
// The model is known fast (3506 against 2860, docs/log/
// 2026-12-07-l2-store.md); the test bounds that gap at 25 %, so a change
// that widens it, or makes the kernel slow, fails.
func TestL2StreamReadIsBoundPerThread(t *testing.T) {
	m, launch := l2StreamModel(t, 1)
	prev := 0.0
	for _, threads := range []int{512, 640, 768, 1024} {
		bw := gbps(m.l2StreamKernel(false, launch).shape(threads, 2).run())
		t.Logf("read %4d x 2: %.0f GB/s", threads, bw)
		if bw <= prev {
			t.Errorf("read kernel at %d x 2: %.0f GB/s, not above %.0f at the step before",
				threads, bw, prev)
		}
		prev = bw
	}
	stream := m.bandwidth("l2", m.l2Bytes()/4, false, false).Value
	if prev > 0.7*stream {
		t.Errorf("read kernel at 100 %%: %.0f GB/s, not bound per thread (L2 streamer %.0f)",
			prev, stream)
	}
	const measured = 2860 // gpu-l2-stream/a100_80.txt, 1024 x 2, size 8063
	if prev < measured || prev > 1.25*measured {
		t.Errorf("read kernel at 100 %%: %.0f GB/s, want within [%d, +25 %%]", prev, measured)
	}
}

// TestL2StreamWriteRatioSlowsStoresOnly: a lower l2.write_ratio never
// makes the store kernel faster and leaves the read kernel's cycles as
// they were; at 0.45 (second-pass log's reading) the store kernel is
// below the read kernel at 100 % occupancy, as on the hardware (2427
// against 2860 GB/s), where at 1.0 it is above it.
func TestL2StreamWriteRatioSlowsStoresOnly(t *testing.T) {
	var prevStore, read0 float64
	for i, r := range []float64{1, 0.7, 0.45, 0.3} {
		m, launch := l2StreamModel(t, r)
		store := m.l2StreamKernel(true, launch).run()
		read := m.l2StreamKernel(false, launch).run()
		t.Logf("write_ratio %.2f: store %.0f, read %.0f GB/s", r, gbps(store), gbps(read))
		if i == 0 {
			read0 = read
			if store <= read {
				t.Errorf("write_ratio 1: store kernel %.0f not above read %.0f GB/s",
					gbps(store), gbps(read))
			}
		} else if store > prevStore {
			t.Errorf("write_ratio %.2f: store kernel %.0f GB/s, faster than %.0f at the ratio before",
				r, gbps(store), gbps(prevStore))
		}
		if read != read0 {
			t.Errorf("write_ratio %.2f moved the read kernel: %.1f against %.1f B/cycle", r, read, read0)
		}
		if r == 0.45 && store >= read {
			t.Errorf("write_ratio 0.45: store kernel %.0f not below read %.0f GB/s",
				gbps(store), gbps(read))
		}
		prevStore = store
	}
}
