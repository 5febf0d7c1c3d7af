package gpu

import (
	"testing"
)

// rrzeDRAMLatency is the A100's DRAM latency measured by a cold pointer
// chase (RRZE-HPC gpu-benches gpu-latency, A100-80GB: about 552 cycles;
// /work/shared/reference/hardware.md), a public figure independent of the
// config.
const rrzeDRAMLatency = 552

// rrzeL2Latency is the mean of the same benchmark's L2 hit latencies,
// near and far partition (about 206 and 406-413 cycles): a line's home
// slice is in either partition about equally often.
const rrzeL2Latency = (206 + 410) / 2

// prologuePerCTA is the exposed prologue of a run per CTA: the prologue
// phase's tensor-core cycles over every tensor core, per CTA an SM ran.
func prologuePerCTA(r *Result, sms int) float64 {
	perTC := phaseCycles(r)["prologue"] / float64(r.TCUnits)
	return perTC * float64(sms) / float64(r.Plan.CTAs)
}

// TestPrologueFillIsLoadsThroughTheHierarchy: at short K the first stages'
// loads before the first MMA are a fixed cost; they are cp.async requests
// through L2 and DRAM, not a figure. On a cold L2 (64 CTAs of
// 128x128x32_64x64_s5 on 16 SMs, K = 256: 8 k-steps) a CTA's first MMA
// waits at least the cold load chain's latency measured on the hardware;
// with the operands in L2 (kernel.l2_start=repeat) it waits less, by about
// the measured DRAM latency less the L2's (within half of it). A second
// CTA resident on the SM issues its stages in the same latency window as
// the first, so the exposed prologue per CTA at two CTAs per SM is well
// under that at one (sm.max_ctas=1): a prologue charged per CTA would not
// shrink.
func TestPrologueFillIsLoadsThroughTheHierarchy(t *testing.T) {
	t.Parallel()
	const kernel = "128x128x32_64x64_s5"
	at := func(sets ...string) *Result {
		sets = append([]string{"gpu.sm_count=16", "sim.fast_forward=false",
			"sim.extrapolate_waves=false"}, sets...)
		return instrRun(t, 1024, 1024, 256, false, kernel, sets...)
	}
	one := at("sm.max_ctas=1")
	two := at()
	warm := at("sm.max_ctas=1", "kernel.l2_start=repeat")
	if one.Plan.Occupancy != 1 || two.Plan.Occupancy != 2 {
		t.Fatalf("occupancy %d and %d: want 1 and 2", one.Plan.Occupancy, two.Plan.Occupancy)
	}
	p1, p2, pw := prologuePerCTA(one, 16), prologuePerCTA(two, 16), prologuePerCTA(warm, 16)
	t.Logf("exposed prologue per CTA: cold, one CTA per SM %.0f cycles; two %.0f; operands in L2 %.0f",
		p1, p2, pw)
	if p1 < rrzeDRAMLatency {
		t.Errorf("cold, one CTA per SM: %.0f cycles before the first MMA, under the %d-cycle DRAM latency "+
			"a cold load pays", p1, rrzeDRAMLatency)
	}
	if d, want := p1-pw, float64(rrzeDRAMLatency-rrzeL2Latency); d < 0.5*want || d > 1.5*want {
		t.Errorf("operands in L2: %.0f cycles of prologue per CTA, cold %.0f: %.0f fewer, want %.0f within half "+
			"(the DRAM latency less the L2's)", pw, p1, d, want)
	}
	if p2 > 0.7*p1 {
		t.Errorf("two CTAs per SM: %.0f cycles of exposed prologue per CTA, one CTA per SM %.0f: "+
			"want under 0.7x (the second CTA's loads overlap the first's)", p2, p1)
	}
}
