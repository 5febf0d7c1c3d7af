package main

import (
	"encoding/json"
	"testing"
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
