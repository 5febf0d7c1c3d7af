package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestMicroTCJSON(t *testing.T) {
	out, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "tc", "--precision", "fp16", "--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Results []struct {
			Precision     string  `json:"precision"`
			Mode          string  `json:"mode"`
			TFLOPS        float64 `json:"tflops"`
			FMAPerClk     float64 `json:"fma_per_clk_per_sm"`
			LatencyCycles float64 `json:"latency_cycles"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	peaks := map[string]float64{"dense": 312, "sparse": 624} // A100 whitepaper
	if len(doc.Results) != 2 {
		t.Fatalf("%d results", len(doc.Results))
	}
	for _, r := range doc.Results {
		if r.Precision != "fp16" || math.Abs(r.TFLOPS/peaks[r.Mode]-1) > 0.01 {
			t.Errorf("%+v", r)
		}
	}
}

func TestMicroTCUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "half"}, {"--precision", "fp8"}, {"--format", "xml"},
		{"--mmas", "0"}, {"--set", "tensorcore.fidelity=exact"}, {"extra"},
	} {
		_, code := captureStdout(t, func() int {
			return dispatch(append([]string{"micro", "tc"}, args...))
		})
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// micro tc bounds its work as run does (issue 35 item 2): a million MMAs
// per tensor core through the stages (about 23 minutes of one core) is
// refused under --max-work 1e6 before anything runs, and named; the
// default benchmark, some 9 warp k-steps, runs under --max-work 100; a
// bound that is not a finite positive number is a usage error.
func TestMicroTCMaxWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--mmas", "1048576", "--set", "tensorcore.fidelity=instruction", "--max-work", "1e6"},
			exitUsage, "above --max-work"},
		{[]string{"--chain", "1048576", "--max-work", "1000"}, exitUsage, "lower --mmas or --chain"},
		{[]string{"--precision", "fp16", "--mode", "dense", "--max-work", "100"}, exitOK, ""},
		{[]string{"--max-work", "NaN"}, exitUsage, "finite number"},
	} {
		_, stderr, code := capture(t, func() int {
			return dispatch(append([]string{"micro", "tc"}, c.args...))
		})
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d saying %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
