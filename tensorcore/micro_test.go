package tensorcore

import (
	"math"
	"strings"
	"testing"
)

// TestMicroTCPeaks: on the a100-40gb section (108 SMs x 4 TCs at
// 1410 MHz) the microbenchmark reproduces NVIDIA's peaks within 1 %.
func TestMicroTCPeaks(t *testing.T) {
	tests := []struct {
		prec  Precision
		mode  Mode
		peak  float64 // TFLOPS / TOPS, NVIDIA A100 whitepaper
		perSM float64
		lat   float64
	}{
		{FP16, Dense, 312, 1024, 32}, {FP16, Sparse, 624, 2048, 36},
		{BF16, Dense, 312, 1024, 32}, {BF16, Sparse, 624, 2048, 36},
		{TF32, Dense, 156, 512, 32}, {TF32, Sparse, 312, 1024, 36},
		{INT8, Dense, 624, 2048, 32}, {INT8, Sparse, 1248, 4096, 36},
	}
	for _, fid := range []string{"batched", "instruction"} {
		opt := DefaultMicroOptions
		if fid == "instruction" {
			// Keeps the test fast (TestMicroTCFidelitiesAgree checks the
			// fidelities agree); the drain tail then costs 0.6 %.
			opt.MMAsPerTC = 512
		}
		for _, tc := range tests {
			if fid == "instruction" && tc.prec != FP16 {
				continue
			}
			r, err := MicroTCWith(a100(fid), 108, 4, 1410, tc.prec, tc.mode, opt)
			if err != nil {
				t.Fatal(err)
			}
			const tol = 0.01
			if math.Abs(r.TFLOPS/tc.peak-1) > tol {
				t.Errorf("%s %s %s: %.1f TFLOPS, peak %.0f", fid, tc.prec, tc.mode, r.TFLOPS, tc.peak)
			}
			if r.FMAPerClkPerSM > tc.perSM || r.FMAPerClkPerSM < tc.perSM*(1-tol) {
				t.Errorf("%s %s %s: %.1f FMA/clk/SM, want %.0f", fid, tc.prec, tc.mode, r.FMAPerClkPerSM, tc.perSM)
			}
			if r.LatencyCycles != tc.lat {
				t.Errorf("%s %s %s: latency %g, want %g", fid, tc.prec, tc.mode, r.LatencyCycles, tc.lat)
			}
		}
	}
}

// TestMicroTCFidelitiesAgree: same run, both fidelities, same cycles.
func TestMicroTCFidelitiesAgree(t *testing.T) {
	opt := MicroOptions{MMAsPerTC: 100, Chain: 5}
	for _, m := range []Mode{Dense, Sparse} {
		b, err := MicroTCWith(a100("batched"), 4, 4, 1410, FP16, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		i, err := MicroTCWith(a100("instruction"), 4, 4, 1410, FP16, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		b.Fidelity, i.Fidelity = "", ""
		if b != i {
			t.Errorf("%s: batched %+v, instruction %+v", m, b, i)
		}
	}
}

func TestMicroTCErrors(t *testing.T) {
	bad := a100("batched")
	bad.FP16.DenseIssueInterval = 7
	for _, tc := range []struct {
		cfg  Config
		sms  int
		prec Precision
		opt  MicroOptions
		want string
	}{
		{a100("batched"), 0, FP16, DefaultMicroOptions, "sm_count"},
		{a100("batched"), 1, Precision(7), DefaultMicroOptions, "unknown precision"},
		{a100("batched"), 1, FP16, MicroOptions{}, "must be >= 1"},
		{bad, 1, FP16, DefaultMicroOptions, "dense_issue_interval"},
	} {
		_, err := MicroTCWith(tc.cfg, tc.sms, 4, 1410, tc.prec, Dense, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
