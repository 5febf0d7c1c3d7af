package memory

import (
	"math"
	"testing"
)

// TestFastAgreesWithDetailed runs small GEMM-like traffic through both
// granularities: DRAM bytes must agree within 2 %, total cycles within 5 %.
func TestFastAgreesWithDetailed(t *testing.T) {
	if testing.Short() {
		t.Skip("detailed memory model: minutes; run without -short")
	}
	cfg := testConfig(t, "a100-40gb")
	cases := []gemmTraffic{
		{m: 512, n: 512, k: 256, bm: 128, bn: 128, bk: 64, stages: 4, sms: 16},
		{m: 512, n: 256, k: 512, bm: 128, bn: 128, bk: 128, stages: 3,
			sparse: true, sms: 8},
		{m: 256, n: 512, k: 256, bm: 128, bn: 64, bk: 64, stages: 4,
			beta: true, sms: 16},
		{m: 128, n: 2048, k: 256, bm: 64, bn: 128, bk: 64, stages: 6,
			sparse: true, sms: 8},
		// L2 of 320 KiB: evictions and dirty write-backs during the run.
		{m: 512, n: 512, k: 512, bm: 128, bn: 128, bk: 64, stages: 2,
			sms: 4, l2KB: 320},
		// DRAM-bound: 32 SMs stream a B of 2 MiB once.
		{m: 128, n: 2048, k: 512, bm: 64, bn: 128, bk: 64, stages: 4,
			sms: 32},
	}
	for _, g := range cases {
		t.Run(g.String(), func(t *testing.T) {
			c := cfg
			if g.l2KB > 0 {
				c.L2.SizeKB = g.l2KB
			}
			fc, fs := runGEMM(t, c, g, "fast")
			dc, ds := runGEMM(t, c, g, "detailed")
			fd := fs.DRAMReadBytes + fs.DRAMWriteBytes
			dd := ds.DRAMReadBytes + ds.DRAMWriteBytes
			t.Logf("fast: %d cycles, DRAM %d B (r %d w %d), L2 hit %.3f",
				fc, fd, fs.DRAMReadBytes, fs.DRAMWriteBytes, fs.L2HitRate())
			t.Logf("detailed: %d cycles, DRAM %d B (r %d w %d), L2 hit %.3f",
				dc, dd, ds.DRAMReadBytes, ds.DRAMWriteBytes, ds.L2HitRate())
			if d := relDiff(fd, dd); d > 0.02 {
				t.Errorf("DRAM bytes differ by %.1f %% (> 2 %%)", 100*d)
			}
			if d := relDiff(fc, dc); d > 0.05 {
				t.Errorf("cycles differ by %.1f %% (> 5 %%)", 100*d)
			}
		})
	}
}

func relDiff(a, b uint64) float64 {
	return math.Abs(float64(a)-float64(b)) / math.Max(1, float64(b))
}
