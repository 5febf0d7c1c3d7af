package gpu

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
)

// sumShares adds every cause of a breakdown (every float field).
func sumShares(b results.Breakdown) float64 {
	v := reflect.ValueOf(b)
	sum := 0.0
	for i := 0; i < v.NumField(); i++ {
		sum += v.Field(i).Float()
	}
	return sum
}

// bdRun is the breakdown of 512x1536x512 dense (48 CTAs of
// 128x128x32_64x64_s5) on an instruction-level GPU of 48 SMs (one CTA
// each, unless sets say otherwise).
func bdRun(t *testing.T, sets ...string) results.Breakdown {
	t.Helper()
	sets = append([]string{"gpu.sm_count=48"}, sets...)
	b := instrRun(t, 512, 1536, 512, false, "128x128x32_64x64_s5", sets...).Breakdown
	if s := sumShares(b); math.Abs(s-1) > 1e-9 {
		t.Errorf("%v: shares sum to %.12f, want 1", sets, s)
	}
	return b
}

// causeShares are a breakdown's shares by JSON name.
func causeShares(b results.Breakdown) map[string]float64 {
	v := reflect.ValueOf(b)
	out := map[string]float64{}
	for i := 0; i < v.NumField(); i++ {
		out[strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0]] = v.Field(i).Float()
	}
	return out
}

// Starving one mechanism moves the time into its own cause: that share
// grows more than any other and (starved far enough) becomes the bound.
// Reading C in the epilogue (beta 1) lengthens each CTA's tail.
func TestBreakdownFollowsTheCause(t *testing.T) {
	t.Parallel()
	b0 := bdRun(t)
	base := causeShares(b0)
	if b0.Compute < 0.5 {
		t.Fatalf("default: tensor cores busy %.2f, want a kernel mostly computing: %+v", b0.Compute, b0)
	}
	for _, c := range []struct {
		set, cause string
		bound      bool
	}{
		{"sm.barrier_latency=2000", "barrier", true},
		{"sm.register_file_bytes_per_clk=2", "register_file", true},
		{"dram.bandwidth_gbps=50", "dram_bandwidth", true},
		{"dram.latency=20000", "dram_latency", true},
		{"sm.kernel_launch_latency=100000", "launch", true},
		{"shared_memory.bytes_per_clk=16", "smem", true},
		{"gpu.sm_count=144", "wave_quantization", true},
		{"kernel.beta=1", "tail", false},
	} {
		b := bdRun(t, c.set)
		got := causeShares(b)
		grew, most := "", -2.0
		for k, v := range got {
			if d := v - base[k]; d > most {
				grew, most = k, d
			}
		}
		if grew != c.cause || (c.bound && b.Bound() != c.cause) {
			t.Errorf("%s: %s grew most (%+.3f), bound %s; want %s (%.3f -> %.3f)",
				c.set, grew, most, b.Bound(), c.cause, base[c.cause], got[c.cause])
		}
	}
}

// The shares sum to 1 on dense and sparse kernels, one and several
// waves, split-K and extrapolated runs, and every tensor core's cycle is
// in them: busy cycles are the compute share.
func TestBreakdownSumsToOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m, n, k int
		sparse  bool
		kernel  string
		sets    []string
	}{
		{512, 512, 1024, false, "128x128x32_64x64_s5", nil},
		{1024, 1024, 1024, true, "64x64x64_32x32_s6", nil},
		{256, 256, 4096, false, "128x128x32_64x64_s5_splitk4", nil},
		{2048, 2048, 256, true, "128x128x64_64x64_s3", []string{"sim.extrapolate_waves=true"}},
	} {
		r := instrRun(t, c.m, c.n, c.k, c.sparse, c.kernel, c.sets...)
		if s := sumShares(r.Breakdown); math.Abs(s-1) > 1e-9 {
			t.Errorf("%dx%dx%d %s: shares sum to %.12f", c.m, c.n, c.k, c.kernel, s)
		}
		want := float64(r.TCBusy) / float64(r.Cycles*uint64(r.TCUnits))
		if math.Abs(r.Breakdown.Compute-want) > 0.01 {
			t.Errorf("%dx%dx%d %s: compute share %.4f, tensor-core busy %.4f",
				c.m, c.n, c.k, c.kernel, r.Breakdown.Compute, want)
		}
	}
}
