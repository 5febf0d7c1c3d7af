package unit

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// micro runs the microbenchmark on one SM (4 tensor cores) in both
// fidelities and checks they agree; it returns the batched result.
func micro(t *testing.T, cfg tensorcore.Config, prec tensorcore.Precision, m tensorcore.Mode) MicroResult {
	t.Helper()
	opt := MicroOptions{MMAsPerTC: 256, Chain: 8}
	var out [2]MicroResult
	for i, f := range []string{"batched", "instruction"} {
		cfg.Fidelity = f
		r, err := MicroTCWith(cfg, 1, 4, 1410, prec, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = r
	}
	if out[0].TFLOPS != out[1].TFLOPS || out[0].LatencyCycles != out[1].LatencyCycles {
		t.Fatalf("%s %s: batched %+v, instruction %+v", prec, m, out[0], out[1])
	}
	return out[0]
}

// rate is a result's dense-equivalent FMAs per cycle per tensor core.
func rate(r MicroResult) float64 { return r.FMAPerClkPerSM / 4 }

func near(a, b float64) bool { return math.Abs(a/b-1) < 0.02 }

// TestBOperandWidth: halving the B operand path halves sparse MMA
// throughput when B delivery is the limit (64 -> 32 B/clk: the 512 B of
// B an m16n8k32 needs take 16 cycles instead of 8) and changes nothing
// when it is not (128 -> 64 B/clk: the multipliers still take 8). Dense
// needs only 256 B of B, so 64 -> 32 leaves it alone.
func TestBOperandWidth(t *testing.T) {
	at := func(b int, m tensorcore.Mode) MicroResult {
		cfg := a100("")
		cfg.FP16.BOperandBytesPerClk = b
		return micro(t, cfg, tensorcore.FP16, m)
	}
	if r64, r32 := at(64, tensorcore.Sparse), at(32, tensorcore.Sparse); !near(rate(r32), rate(r64)/2) {
		t.Errorf("sparse B 64 -> 32: %.0f -> %.0f FMA/clk, want half", rate(r64), rate(r32))
	}
	if r128, r64 := at(128, tensorcore.Sparse), at(64, tensorcore.Sparse); rate(r128) != rate(r64) {
		t.Errorf("sparse B 128 -> 64: %.0f -> %.0f FMA/clk, want unchanged", rate(r128), rate(r64))
	}
	if d64, d32 := at(64, tensorcore.Dense), at(32, tensorcore.Dense); rate(d64) != rate(d32) {
		t.Errorf("dense B 64 -> 32: %.0f -> %.0f FMA/clk, want unchanged", rate(d64), rate(d32))
	}
	if r := at(32, tensorcore.Sparse); r.IssueInterval != 16 || r.Binding[0] != "b_operand_bytes_per_clk" {
		t.Errorf("B 32: interval %d bound by %v", r.IssueInterval, r.Binding)
	}
}

// TestFanInLatency: a wider selector is deeper (ceil(log2 fan-in) 2:1
// levels at mux_level_latency 1), so it adds latency and no throughput
// for 2:4; for 2:8 a 4-input selector needs two passes per product, so
// it halves the rate an 8-input one gives.
func TestFanInLatency(t *testing.T) {
	at := func(fan int, pat string) MicroResult {
		cfg := a100("")
		cfg.FP16.SelectorFanIn, cfg.FP16.SparsePattern = fan, pat
		cfg.FP16.BOperandBytesPerClk = 256 // B never the limit here
		cfg.FP16.MetadataBitsPerClk = 256
		return micro(t, cfg, tensorcore.FP16, tensorcore.Sparse)
	}
	base := at(4, "2:4")
	for fan, extra := range map[int]float64{8: 1, 16: 2, 64: 4} {
		r := at(fan, "2:4")
		if r.LatencyCycles != base.LatencyCycles+extra || !near(rate(r), rate(base)) {
			t.Errorf("fan-in %d: latency %g (base %g), rate %.0f (base %.0f)",
				fan, r.LatencyCycles, base.LatencyCycles, rate(r), rate(base))
		}
	}
	if w8, w4 := at(8, "2:8"), at(4, "2:8"); !near(rate(w4), rate(w8)/2) {
		t.Errorf("2:8: fan-in 8 %.0f, fan-in 4 %.0f FMA/clk, want half", rate(w8), rate(w4))
	}
}

// TestMetadataDecoder: the 512 metadata bits of an fp16 m16n8k32 at
// metadata_bits_per_clk bits per cycle take ceil(512 / rate) cycles; once
// that exceeds the 8 cycles of the multipliers it sets the rate: 4096
// dense-equivalent FMAs per that many cycles.
func TestMetadataDecoder(t *testing.T) {
	for _, tc := range []struct {
		bits   int
		cycles float64
	}{{128, 8}, {64, 8}, {48, 11}, {32, 16}, {16, 32}} {
		cfg := a100("")
		cfg.FP16.MetadataBitsPerClk = tc.bits
		r := micro(t, cfg, tensorcore.FP16, tensorcore.Sparse)
		if !near(rate(r), 4096/tc.cycles) {
			t.Errorf("%d bits/clk: %.1f FMA/clk, want 4096/%g = %.1f", tc.bits,
				rate(r), tc.cycles, 4096/tc.cycles)
		}
		if d := micro(t, cfg, tensorcore.FP16, tensorcore.Dense); !near(rate(d), 2048/8.0) {
			t.Errorf("%d bits/clk: dense %.1f FMA/clk, want 256", tc.bits, rate(d))
		}
	}
}

// TestPatternsDerive: every supported pattern's instruction multiplies the
// dense instruction's number of kept values and carries kept x
// ceil(log2 M) metadata bits (4 per kept value for 1:2). At the A100
// widths 1:4 and 2:8 are limited by B delivery (the whole M-wide chunk of
// B crosses the operand path: 1024 B in 16 cycles; 2:8 also by the two
// passes of the 4-input selector), 4:8 by those two passes and 1:2 by its
// 1024 metadata bits (16 cycles).
func TestPatternsDerive(t *testing.T) {
	p := a100("").FP16
	for _, tc := range []struct {
		pat      tensorcore.Pattern
		k, bits  int
		interval int
	}{
		{tensorcore.Pattern{N: 1, M: 2}, 32, 4, 16}, {tensorcore.Pattern{N: 2, M: 4}, 32, 2, 8}, {tensorcore.Pattern{N: 1, M: 4}, 64, 2, 16},
		{tensorcore.Pattern{N: 2, M: 8}, 64, 3, 16}, {tensorcore.Pattern{N: 4, M: 8}, 32, 3, 16},
	} {
		d, err := tensorcore.Derive(&p, tensorcore.FP16, tensorcore.Sparse, tc.pat, 0)
		if err != nil {
			t.Fatal(err)
		}
		kept := 16 * 16 // rows x kept K of every fp16 instruction
		meta := 0
		for _, c := range d.Constraints {
			if c.Key == "metadata_bits_per_clk" {
				meta = c.Demand
			}
		}
		if d.Shape.K != tc.k || d.Products != kept*8 || meta != kept*tc.bits ||
			d.Interval != tc.interval {
			t.Errorf("%s: shape %s, %d products, %d metadata bits, interval %d",
				tc.pat, d.Shape, d.Products, meta, d.Interval)
		}
	}
	if _, err := tensorcore.Derive(&p, tensorcore.FP16, tensorcore.Sparse, tensorcore.Pattern{N: 3, M: 8}, 0); err == nil {
		t.Error("3:8 on m16n8k16 (K 16*8/3) accepted")
	}
}
