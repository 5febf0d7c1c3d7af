package gpu

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/results"
)

// phaseCycles are a result's phases in tensor-core cycles (shares of
// every tensor core's time over the kernel).
func phaseCycles(r *Result) map[string]float64 {
	all := float64(r.Cycles) * float64(r.TCUnits)
	out := map[string]float64{}
	for i, v := range r.Phases.Shares() {
		out[results.PhaseNames[i]] = v * all
	}
	return out
}

// The phases are a split of the kernel's time by where in a CTA's life it
// went: they sum to 1, and doubling K on one wave of CTAs (48 CTAs of
// 128x128x32_64x64_s5 on 48 SMs) doubles the mainloop while the fixed
// phases stay within 15 % (the T(2K) - T(K) reading of fixed costs,
// measured here from a single run each). A longer DRAM latency lengthens
// the prologue (the first stages' fill, at one CTA per SM with nothing
// else for the tensor cores to do) by that latency on every tensor core,
// a C read in the epilogue (beta 1) lengthens the epilogue more than any
// other phase, and SMs without a CTA are the last wave's.
func TestPhasesSplitByWhereTimeWent(t *testing.T) {
	t.Parallel()
	const kernel = "128x128x32_64x64_s5"
	at := func(k int, sets ...string) (*Result, map[string]float64) {
		sets = append([]string{"gpu.sm_count=48", "sim.fast_forward=false"}, sets...)
		r := instrRun(t, 512, 1536, k, false, kernel, sets...)
		sum := 0.0
		for _, v := range r.Phases.Shares() {
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("K=%d %v: phases sum to %.12f", k, sets, sum)
		}
		return r, phaseCycles(r)
	}
	_, p1 := at(1024)
	_, p2 := at(2048)
	if g := p2["mainloop"] / p1["mainloop"]; math.Abs(g-2) > 0.1 {
		t.Errorf("mainloop grew %.3fx from K=1024 to 2048, want 2", g)
	}
	fixed := func(p map[string]float64) float64 {
		return p["launch"] + p["prologue"] + p["epilogue"] + p["last_wave"]
	}
	if g := fixed(p2) / fixed(p1); math.Abs(g-1) > 0.15 {
		t.Errorf("fixed phases %.0f -> %.0f cycles (%.3fx) from K=1024 to 2048, want about the same: %v -> %v",
			fixed(p1), fixed(p2), g, p1, p2)
	}
	if p1["prologue"] <= 0 || p1["epilogue"] <= 0 || p1["launch"] <= 0 {
		t.Errorf("K=1024: a phase of every CTA is empty: %v", p1)
	}
	r, p := at(1024, "dram.latency=2552") // the config's 552 + 2000
	if g := (p["prologue"] - p1["prologue"]) / float64(r.TCUnits); g < 0.8*2000 || g > 1.2*2000 {
		t.Errorf("2000 cycles more DRAM latency: prologue %+.0f cycles per tensor core, want about 2000 (%.0f -> %.0f)",
			g, p1["prologue"], p["prologue"])
	}
	for _, c := range []struct{ set, phase string }{
		{"kernel.beta=1", "epilogue"},
		{"gpu.sm_count=64", "last_wave"},
	} {
		_, p := at(1024, c.set)
		grew, most := "", math.Inf(-1)
		for k, v := range p {
			if d := v - p1[k]; d > most {
				grew, most = k, d
			}
		}
		if grew != c.phase {
			t.Errorf("%s: %s grew most (%+.0f cycles), want %s (%.0f -> %.0f)",
				c.set, grew, most, c.phase, p1[c.phase], p[c.phase])
		}
	}
}

// The steady-state fast-forward leaves out stretches of the mainloop; the
// time split it reports is the full run's: every cause and phase within
// 1.5 points on a kernel with SMs left without a CTA (12 CTAs of 128x128
// on 16 SMs, 256 k-steps), whose idle SMs are wave quantization in both.
func TestFastForwardKeepsTheBreakdown(t *testing.T) {
	t.Parallel()
	sets := []string{"gpu.sm_count=16"}
	const kernel = "128x128x32_64x64_s5"
	ff := instrRun(t, 384, 512, 8192, false, kernel, sets...)
	full := instrRun(t, 384, 512, 8192, false, kernel, append(sets, "sim.fast_forward=false")...)
	if ff.FastForwarded == 0 {
		t.Fatal("not fast-forwarded")
	}
	a, b := causeShares(ff.Breakdown), causeShares(full.Breakdown)
	for k := range b {
		if math.Abs(a[k]-b[k]) > 0.015 {
			t.Errorf("cause %s: %.4f fast-forwarded, %.4f in full", k, a[k], b[k])
		}
	}
	for i, name := range results.PhaseNames {
		x, y := ff.Phases.Shares()[i], full.Phases.Shares()[i]
		if math.Abs(x-y) > 0.015 {
			t.Errorf("phase %s: %.4f fast-forwarded, %.4f in full", name, x, y)
		}
	}
	if w := full.Breakdown.Waves; w < 0.2 {
		t.Errorf("full run: wave quantization %.3f with 4 of 16 SMs idle, want about 0.25", w)
	}
}
