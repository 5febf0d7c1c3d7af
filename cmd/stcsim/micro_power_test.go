package main

import (
	"encoding/json"
	"testing"

	"github.com/stcsim/stcsim/sim"
)

// micro power's points order as the kernels' activity does: idle below a
// DRAM stream below a tensor-core-bound kernel, each within the limit
// once capped, and the published idle row within a few percent (the
// static power is calibrated on it).
func TestMicroPower(t *testing.T) {
	var out microPowerOutput
	raw, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "power", "--config", "a100-pcie-40gb",
			"--format", "json"})
	})
	if err := json.Unmarshal([]byte(raw), &out); err != nil || code != exitOK {
		t.Fatalf("%v: %s", err, raw)
	}
	w := map[string]float64{}
	for _, r := range out.Results {
		w[r.Kernel] = r.PowerW
		if r.CappedW > out.LimitW || r.CappedMHz > r.ClockMHz {
			t.Errorf("%s capped at %d MHz, %.1f W (limit %.0f)", r.Kernel,
				r.CappedMHz, r.CappedW, out.LimitW)
		}
	}
	if !(w["idle"] < w["dram-stream"] && w["dram-stream"] < w["tc-dense-fp16"]) {
		t.Errorf("power not ordered by activity: %v", w)
	}
	if len(out.Published) != 2 {
		t.Fatalf("published rows for a100-pcie-40gb at 1410 MHz: %v", out.Published)
	}
	for _, p := range out.Published {
		if p.Kernel == "idle" && (w["idle"] < 0.9*p.Watts || w["idle"] > 1.1*p.Watts) {
			t.Errorf("idle %.1f W, measured %.1f W", w["idle"], p.Watts)
		}
		// Held out: nothing was set from Luo et al.'s 173.4 W; with the
		// microbenchmark's unchanging operands the model must land within
		// 10 % (it was +207 % at random-data activity).
		if p.Kernel == "tc-dense-fp16-const" && (w[p.Kernel] < 0.9*p.Watts || w[p.Kernel] > 1.1*p.Watts) {
			t.Errorf("%s %.1f W, measured %.1f W", p.Kernel, w[p.Kernel], p.Watts)
		}
	}
	if !(w["tc-dense-fp16-const"] < w["tc-dense-fp16"] && w["tc-dense-fp16-const"] > w["idle"]) {
		t.Errorf("constant operands must draw less than random ones and more than idle: %v", w)
	}
	if code := dispatch([]string{"micro", "power", "--format", "xml"}); code != exitUsage {
		t.Errorf("bad --format: exit %d, want %d", code, exitUsage)
	}
}

// The RTX 3090 runs its fp16 GEMMs at about its rated boost at its
// 350 W limit, not below it: one board held under a lower 315 W cap ran
// a GEMM-bound LLM prefill at 1635-1650 MHz (ashalliants/ninfer-3090 PR
// 72), and three boards at their stock limits (350 W and up, not stated)
// ran torch.mm on torch.randn fp16 at 75.5-75.9 TFLOPS
// (zzc0721/torch-performance-test-data database.md), above the 71.2
// TFLOPS of 82 SMs x 512 FLOP/clk at 1695 MHz, so at 1807 MHz or more.
// The model's tensor-bound fp16 kernel at random-data activity must
// therefore keep the rated 1695 MHz within 350 W: GA102 event energies
// raised until a 3090 GEMM is capped below its boost would contradict
// both (docs/log/2026-12-08-ga102-power.md).
func TestRTX3090GEMMNotCappedBelowBoost(t *testing.T) {
	r, limit := microPowerDenseFP16(t, "--config", "rtx3090")
	if r.ClockMHz != 1695 || r.PowerW > limit || r.CappedMHz != 1695 {
		t.Errorf("tc-dense-fp16 at %d MHz: %.1f W, capped at %d MHz (limit %.0f W); "+
			"measured RTX 3090s run GEMMs at 1635 MHz under 315 W and 1807 MHz or more at their stock limits",
			r.ClockMHz, r.PowerW, r.CappedMHz, limit)
	}
}

// microPowerDenseFP16 runs stcsim micro power with args and returns its
// tc-dense-fp16 point and the limit it ran under.
func microPowerDenseFP16(t *testing.T, args ...string) (sim.PowerPoint, float64) {
	t.Helper()
	var out microPowerOutput
	raw, code := captureStdout(t, func() int {
		return dispatch(append([]string{"micro", "power", "--format", "json"}, args...))
	})
	if err := json.Unmarshal([]byte(raw), &out); err != nil || code != exitOK {
		t.Fatalf("%v: %v: %s", args, err, raw)
	}
	for _, r := range out.Results {
		if r.Kernel == "tc-dense-fp16" {
			return r, out.LimitW
		}
	}
	t.Fatalf("%v: no tc-dense-fp16 point: %s", args, raw)
	return sim.PowerPoint{}, 0
}

// On the GA102 V/f table the capped clock follows the limit: the RTX
// A6000's tensor-bound fp16 kernel (full-rate FP32 accumulation, near
// its 300 W limit at the 1800 MHz boost) runs no faster under a lower
// limit, strictly slower at 200 W than at 300 W, and within each limit.
func TestGA102CappedClockFallsWithLimit(t *testing.T) {
	prev, first := 0, 0
	for _, limit := range []string{"300", "250", "200"} {
		r, w := microPowerDenseFP16(t, "--config", "rtx-a6000", "--set", "power.limit_w="+limit)
		if r.CappedW > w || (prev != 0 && r.CappedMHz > prev) {
			t.Errorf("limit %s W: capped at %d MHz, %.1f W (previous limit's clock %d MHz)",
				limit, r.CappedMHz, r.CappedW, prev)
		}
		if first == 0 {
			first = r.CappedMHz
		}
		prev = r.CappedMHz
	}
	if prev >= first {
		t.Errorf("200 W limit: capped at %d MHz, not below the 300 W limit's %d", prev, first)
	}
}
