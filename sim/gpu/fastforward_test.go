package gpu

import (
	"fmt"
	"testing"
)

// dramBoundFamily are skinny GEMMs (a decode step's weight GEMMs: N of
// 1 to 16, K 4096 or 8192) whose time is the DRAM's, on 16 SMs with the
// DRAM scaled with them (230 of the a100-40gb's 1555 GB/s for 16 of its
// 108 SMs), so that each SM asks of the DRAM what it asks on the whole
// GPU: 2 CTAs per SM of 128x64 tiles in 2.5 waves (32, 32, 16 CTAs), 4
// of 64x64 tiles, sparse and dense. Before the fast-forward bounded a
// stretch's time by its DRAM bytes (fastForward.dramCycles) it timed
// them 4.7 % to 22 % short of the full run, at 229 to 283 GB/s.
var dramBoundFamily = []struct {
	m, n, k int
	sparse  bool
	kernel  string
}{
	{10240, 1, 4096, false, "128x64x32_64x32_s6"},
	{10240, 1, 4096, false, "64x64x32_32x32_s10"},
	{10240, 16, 4096, false, "128x32x64_64x16_s5"},
	{10240, 1, 4096, true, "128x64x64_64x32_s4"},
	{10240, 1, 8192, true, "64x64x64_32x32_s6"},
}

var dramBoundSets = []string{"gpu.sm_count=16", "dram.bandwidth_gbps=230"}

// dramGBps is a result's DRAM traffic over its time, as the record's
// dram_gbps.
func dramGBps(r *Result, clockMHz int) float64 {
	sec := float64(r.Cycles) / (float64(clockMHz) * 1e6)
	return float64(r.Mem.DRAMReadBytes+r.Mem.DRAMWriteBytes) / sec / 1e9
}

// A fast-forwarded run moves its DRAM bytes no faster than the DRAM's
// channels serve them: its DRAM rate is at most the sustained bandwidth
// (dram.bandwidth_gbps times dram.efficiency), whatever rate its
// measuring window saw, on every DRAM-bound skinny GEMM of the family.
func TestFastForwardWithinDRAMBandwidth(t *testing.T) {
	t.Parallel()
	cfg := loadTest(t, dramBoundSets...)
	sustained := cfg.Memory.DRAM.SustainedGBps()
	for _, c := range dramBoundFamily {
		t.Run(fmt.Sprintf("%dx%dx%d_%s", c.m, c.n, c.k, c.kernel), func(t *testing.T) {
			t.Parallel()
			r := instrRun(t, c.m, c.n, c.k, c.sparse, c.kernel, dramBoundSets...)
			if r.FastForwarded == 0 {
				t.Fatal("not fast-forwarded")
			}
			if got := dramGBps(r, cfg.GPU.ClockMHz); got > sustained {
				t.Errorf("DRAM at %.1f GB/s, above the %.1f GB/s it sustains (%d cycles, %d k-steps left out)",
					got, sustained, r.Cycles, r.FastForwarded)
			}
		})
	}
}
