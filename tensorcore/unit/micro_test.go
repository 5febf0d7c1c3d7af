package unit

import (
	"encoding/csv"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// measuredPeaks reads the achieved peaks published for the A100 (the
// points file's peak-* and mma rows: GPUInspector.jl, many independent
// WMMAs; Sun et al., mma.sp).
func measuredPeaks(t *testing.T) map[string]float64 {
	t.Helper()
	f, err := os.Open("../../validation/points/a100-public.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range recs[1:] {
		if r[3] == "peak" || r[3] == "mma" {
			v, _ := strconv.ParseFloat(r[7]+r[8], 64) // dense or sparse column
			out[r[0]] = v
		}
	}
	return out
}

// TestMicroTCPeaksMatchMeasured: the simulated microbenchmark (every
// tensor core of 108 SMs x 4 at 1410 MHz kept busy) against the peaks
// measured on an A100, within 1 % (the measured peaks are 0.1-0.6 % under
// the whitepaper's). The sparse FP16 rate per SM is an upper bound of the
// mma.sp.m16n8k32 measurement with 8 warps and 2 MMAs in flight each
// (Sun et al.), within 5 %: those warps cannot keep every issue slot full.
func TestMicroTCPeaksMatchMeasured(t *testing.T) {
	peaks := measuredPeaks(t)
	for _, tc := range []struct {
		prec tensorcore.Precision
		id   string
	}{{tensorcore.FP16, "peak-fp16"}, {tensorcore.INT8, "peak-int8"}, {tensorcore.TF32, "peak-tf32"}} {
		want, ok := peaks[tc.id]
		if !ok {
			t.Fatalf("no %s row in the points file", tc.id)
		}
		r, err := MicroTC(a100("batched"), 108, 4, 1410, tc.prec, tensorcore.Dense)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.TFLOPS/want-1) > 0.01 {
			t.Errorf("%s: %.1f T(FL)OPS simulated, %.1f measured", tc.prec, r.TFLOPS, want)
		}
	}
	sp, err := MicroTC(a100("batched"), 108, 4, 1410, tensorcore.FP16, tensorcore.Sparse)
	if err != nil {
		t.Fatal(err)
	}
	if want := peaks["mma-sp-m16n8k32-fp16"]; sp.FMAPerClkPerSM < want ||
		sp.FMAPerClkPerSM > want*1.05 {
		t.Errorf("sparse fp16: %.1f FMA/clk/SM, measured %.1f with 8 warps", sp.FMAPerClkPerSM, want)
	}
}

// TestDependentChainShowsLatency: a chain of MMAs, each waiting for the
// previous result, advances one MMA per pipeline latency, far slower than
// independent MMAs; a deeper pipeline lengthens the chain by exactly its
// extra depth and leaves the independent throughput alone.
func TestDependentChainShowsLatency(t *testing.T) {
	opt := MicroOptions{MMAsPerTC: 512, Chain: 32}
	for _, m := range []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse} {
		deeper := a100("batched")
		deeper.FP16.DotLatency += 8 // a stage of the dot product both paths share
		b, err := MicroTCWith(a100("batched"), 1, 1, 1410, tensorcore.FP16, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		d, err := MicroTCWith(deeper, 1, 1, 1410, tensorcore.FP16, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		perMMA := float64(b.ThroughputCycles) / float64(opt.MMAsPerTC)
		if b.LatencyCycles < 3*perMMA {
			t.Errorf("%s: chain %.1f cycles per MMA, independent %.1f: the chain "+
				"does not wait for its results", m, b.LatencyCycles, perMMA)
		}
		if d.LatencyCycles-b.LatencyCycles != 8 {
			t.Errorf("%s: 8 more pipeline cycles moved the chain by %.1f", m,
				d.LatencyCycles-b.LatencyCycles)
		}
		if math.Abs(d.FMAPerClkPerSM/b.FMAPerClkPerSM-1) > 0.02 {
			t.Errorf("%s: a deeper pipeline changed independent throughput %.1f -> %.1f",
				m, b.FMAPerClkPerSM, d.FMAPerClkPerSM)
		}
	}
}

// TestMicroTCFidelitiesAgree: same run, both fidelities, same cycles.
func TestMicroTCFidelitiesAgree(t *testing.T) {
	opt := MicroOptions{MMAsPerTC: 100, Chain: 5}
	for _, m := range []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse} {
		b, err := MicroTCWith(a100("batched"), 4, 4, 1410, tensorcore.FP16, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		i, err := MicroTCWith(a100("instruction"), 4, 4, 1410, tensorcore.FP16, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		b.Fidelity, i.Fidelity = "", ""
		if !reflect.DeepEqual(b, i) {
			t.Errorf("%s: batched %+v, instruction %+v", m, b, i)
		}
	}
}

func TestMicroTCErrors(t *testing.T) {
	bad := a100("batched")
	bad.FP16.Multipliers = 0
	for _, tc := range []struct {
		cfg  tensorcore.Config
		sms  int
		prec tensorcore.Precision
		opt  MicroOptions
		want string
	}{
		{a100("batched"), 0, tensorcore.FP16, DefaultMicroOptions, "sm_count"},
		{a100("batched"), 1, tensorcore.Precision(7), DefaultMicroOptions, "unknown precision"},
		{a100("batched"), 1, tensorcore.FP16, MicroOptions{}, "must be >= 1"},
		{bad, 1, tensorcore.FP16, DefaultMicroOptions, "multipliers"},
	} {
		_, err := MicroTCWith(tc.cfg, tc.sms, 4, 1410, tc.prec, tensorcore.Dense, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
