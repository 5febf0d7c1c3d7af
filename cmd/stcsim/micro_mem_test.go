package main

import (
	"encoding/json"
	"testing"
)

func TestMicroMemJSON(t *testing.T) {
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
