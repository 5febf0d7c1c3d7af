package memory

import (
	"testing"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// BenchmarkFastRead measures the fast model on tile loads: 108 SMs each
// read a 128x64 fp16 tile (128 lines, 16 KiB) of a 64 MiB matrix per
// call, one round of calls every 400 cycles (about the L2 bandwidth), so
// that L2 hits and misses mix. It reports lines per wall-second.
func BenchmarkFastRead(b *testing.B) {
	benchRead(b, "fast", 108)
}

// BenchmarkDetailedRead is the same traffic through the Akita components,
// with 8 SMs.
func BenchmarkDetailedRead(b *testing.B) {
	benchRead(b, "detailed", 8)
}

func benchRead(b *testing.B, gran string, sms int) {
	cfg := testConfig(b, "a100-40gb")
	e := akita.NewSerialEngine()
	h, err := MakeBuilder().WithEngine(e).WithFreq(clock.MHz(1410).Freq).WithConfig(cfg).WithNumSMs(sms).WithGranularity(gran).Build("Memory")
	if err != nil {
		b.Fatal(err)
	}
	const rowBytes, rows, pitch = 128, 128, 8192
	tiles := uint64(64<<20) / (rows * pitch) * (pitch / rowBytes)
	var now uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := uint64(i) % tiles
		base := t/(pitch/rowBytes)*rows*pitch + t%(pitch/rowBytes)*rowBytes
		r := Region{Base: base, Rows: rows, RowBytes: rowBytes, Pitch: pitch}
		h.Read(now, i%sms, BOperand, r, false, func(uint64) {})
		if i%sms == sms-1 {
			now += 400
			if i%(64*sms) == 0 {
				_ = e.Run()
			}
		}
	}
	_ = e.Run()
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "lines/s")
}
