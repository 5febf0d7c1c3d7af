package sim

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// Properties the model must have whatever its parameters; each compares
// runs of the model with each other or with the format's definition, never
// with a value the code under test computes.

// More bandwidth at any level never makes a kernel slower beyond the
// ensemble's spread (a jitter ensemble of 3: run-to-run variation of the
// model under perturbed dispatch and tie order is not a slowdown).
func TestMoreBandwidthNeverSlower(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	if testing.Short() {
		t.Skip("two GEMMs in five configs, jitter ensembles of 3; run without -short")
	}
	// 16 SMs with DRAM at 16/108 of the A100's 1555 GB/s (230 GB/s): each
	// SM sees the memory it saw on 108, at a fraction of the work. Shared
	// memory is widened with a second port, as the loader requires of
	// bytes_per_clk.
	cfg := []string{"gpu.sm_count=16", "dram.bandwidth_gbps=230"}
	more := []string{"dram.bandwidth_gbps=460", "l2.bytes_per_clk=10240",
		"shared_memory.ports=2 shared_memory.bytes_per_clk=256",
		"crossbar.port_bytes_per_clk=128"}
	for _, shape := range [][3]int{{256, 1024, 512}, {512, 512, 1024}} {
		job := gemmJob(shape)
		base := ensembleCycles3(t, job, cfg...)
		for _, set := range more {
			got := ensembleCycles3(t, job, append(append([]string{}, cfg...), strings.Fields(set)...)...)
			for i, b := range base {
				g := got[i]
				tol := max(b.spread, g.spread)
				t.Logf("%v %s %s: %.0f -> %.0f cycles (spread %.2f%%)", shape,
					b.mode, set, b.mean, g.mean, 100*tol)
				if g.mean > b.mean*(1+tol) {
					t.Errorf("%v %s with %s: %.0f cycles, slower than %.0f "+
						"beyond the spread %.2f%%", shape, b.mode, set, g.mean,
						b.mean, 100*tol)
				}
			}
		}
	}
}

type ensembleStat struct {
	mode         tensorcore.Mode
	mean, spread float64
}

func ensembleCycles3(t *testing.T, job Job, sets ...string) []ensembleStat {
	t.Helper()
	sets = append([]string{"kernel.force=128x128x64_64x64_s3", "sim.jitter_runs=3"}, sets...)
	var out []ensembleStat
	for _, r := range run(t, job, sets...).Results {
		if r.CyclesMean == 0 {
			t.Fatalf("%s: no cycles_mean with sim.jitter_runs=3", r.Mode)
		}
		out = append(out, ensembleStat{r.Mode, r.CyclesMean, r.CyclesSpread})
	}
	return out
}

// The jitter ensemble perturbs run k > 0 only, deterministically: its
// mean is reproducible, and one run is the unperturbed model. On 16 SMs
// (one wave of two CTAs per SM): the ensemble, not the GPU's size, is
// under test.
func TestJitterEnsemble(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 1024, 512})
	force := "kernel.force=128x128x64_64x64_s3"
	one := run(t, job, force, "gpu.sm_count=16")
	a := run(t, job, force, "gpu.sm_count=16", "sim.jitter_runs=4")
	b := run(t, job, force, "gpu.sm_count=16", "sim.jitter_runs=4")
	for i, r := range a.Results {
		if r.CyclesMean != b.Results[i].CyclesMean || r.CyclesSpread != b.Results[i].CyclesSpread {
			t.Errorf("%s: ensemble not reproducible: %v/%v vs %v/%v", r.Mode,
				r.CyclesMean, r.CyclesSpread, b.Results[i].CyclesMean, b.Results[i].CyclesSpread)
		}
		if r.CyclesSpread <= 0 {
			t.Errorf("%s: spread %g: the perturbations changed nothing", r.Mode, r.CyclesSpread)
		}
		if one.Results[i].CyclesMean != 0 || len(one.Results[i].Candidates) == 0 {
			t.Errorf("%s: single run: cycles_mean %v, %d candidates", r.Mode,
				one.Results[i].CyclesMean, len(one.Results[i].Candidates))
		}
	}
}

// Metadata traffic follows the compressed format: every A tile read
// brings its kept values' index bits, so the bytes are tiles along N x
// M x K x (N/M kept) x bits / 8, for 2:4 (2-bit fields) and 1:2 (the PTX
// 4-bit fields) alike;
// dense kernels move none; DRAM reads at least the compressed A and B.
func TestMetadataBytesScaleWithIndexBits(t *testing.T) {
	t.Parallel()
	const m, n, k, bn = 256, 256, 1024, 128
	for _, c := range []struct {
		pattern, shape string
		keepN, keepM   int
		bits           int
	}{{"2:4", "m16n8k32", 2, 4, 2}, {"2:8", "m16n8k64", 2, 8, 3}, {"1:2", "m16n8k32", 1, 2, 4}} {
		job := gemmJob([3]int{m, n, k})
		if c.pattern == "1:2" { // not fp16's hardware pattern: the row's own
			job.Workloads[0].GEMMs[0].Sparsity = c.pattern
		}
		rep := run(t, job, "kernel.force=128x128x64_64x64_s3",
			"tensorcore.fp16.sparse_pattern="+c.pattern)
		d, s := rep.Results[0], rep.Results[1]
		want := uint64(n/bn) * m * k * uint64(c.keepN) / uint64(c.keepM) * uint64(c.bits) / 8
		if s.MetadataBytes != want || d.MetadataBytes != 0 {
			t.Errorf("%s: metadata %d B (dense %d), want %d", c.pattern,
				s.MetadataBytes, d.MetadataBytes, want)
		}
		compA := uint64(m * k * c.keepN / c.keepM * 2)
		if s.DRAMReadBytes < compA+n*k*2 || d.DRAMReadBytes < m*k*2+n*k*2 {
			t.Errorf("%s: DRAM reads %d (sparse), %d (dense) below the operands",
				c.pattern, s.DRAMReadBytes, d.DRAMReadBytes)
		}
	}
}
