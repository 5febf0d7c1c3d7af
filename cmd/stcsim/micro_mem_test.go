package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stcsim/stcsim/memory"

	"github.com/stcsim/stcsim/internal/clock"
)

// fakeMicroMem stands in for memory.MicroMem (tested in package memory)
// and records the arguments it was called with.
func fakeMicroMem(t *testing.T) *[]any {
	t.Helper()
	var got []any
	real := microMem
	microMem = func(cfg memory.Config, clk clock.Clock, sms, ctaLaunch int) ([]memory.MicroResult, error) {
		got = []any{cfg.DRAM.BandwidthGBps, clk.Freq, sms, ctaLaunch}
		var res []memory.MicroResult
		for _, lv := range []string{"l1", "l2_near", "l2_far", "dram"} {
			res = append(res, memory.MicroResult{Kind: "latency", Level: lv, Value: 100, Unit: "cycles"})
		}
		for _, lv := range []string{"l1", "l2", "dram"} {
			res = append(res, memory.MicroResult{Kind: "bandwidth", Level: lv, Value: 1000, Unit: "GB/s"})
		}
		return res, nil
	}
	t.Cleanup(func() { microMem = real })
	return &got
}

func TestMicroMemJSON(t *testing.T) {
	called := fakeMicroMem(t)
	out, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "mem", "--config", "a100-80gb",
			"--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Results []struct {
			Kind  string  `json:"kind"`
			Level string  `json:"level"`
			Value float64 `json:"value"`
			Unit  string  `json:"unit"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	want := map[string]string{"latency/l1": "cycles", "latency/l2_near": "cycles",
		"latency/l2_far": "cycles", "latency/dram": "cycles",
		"bandwidth/l1": "GB/s", "bandwidth/l2": "GB/s", "bandwidth/dram": "GB/s"}
	for _, r := range doc.Results {
		if u, ok := want[r.Kind+"/"+r.Level]; ok {
			if u != r.Unit || r.Value <= 0 {
				t.Errorf("%+v", r)
			}
			delete(want, r.Kind+"/"+r.Level)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
	// a100-80gb: HBM2e at 2039 GB/s, 1410 MHz, 108 SMs.
	if w := []any{2039.0, clock.MHz(1410).Freq, 108, 150}; fmt.Sprint(*called) != fmt.Sprint(w) {
		t.Errorf("MicroMem called with %v, want %v", *called, w)
	}
}

func TestMicroMemUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--format", "xml"}, {"--set", "l2.bytes_per_clk=0"}, {"extra"},
	} {
		if code := dispatch(append([]string{"micro", "mem"}, args...)); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
