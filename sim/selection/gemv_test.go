package selection

import (
	"slices"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

func gemvCfg(t *testing.T, sets ...string) *configs.Config {
	t.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	return ld.Config
}

func gemvShape(m, n, k int) kernel.Shape {
	return kernel.Shape{M: m, N: n, K: k, Batch: 1, Precision: tensorcore.FP16}
}

func simulateGEMV(t *testing.T, cfg *configs.Config, g kernel.Shape) *gpu.Result {
	t.Helper()
	p, err := kernel.NewGEMV(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gpu.Simulate(cfg, p, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The GEMV is one of a decode GEMM's candidates, and selection picks it
// exactly where its simulation beats the library's tiles: on
// Llama-3-8B's k_proj at batch 1 (1024 x 1 x 4096: 64 tiles of 16
// columns leave most SMs idle, split-K pays a reduction) it is chosen;
// on Llama-2-7B's attention projection (4096 x 1 x 4096) it is chosen
// only if faster than the best tile. The sparse GEMM never gets it.
func TestGEMVChosenWhereFaster(t *testing.T) {
	if testing.Short() {
		t.Skip("three selections of decode GEMMs on 108 SMs")
	}
	cfg := gemvCfg(t)
	for _, c := range []struct {
		g    kernel.Shape
		wins bool // must the GEMV win (else: chosen iff faster)
	}{{gemvShape(1024, 1, 4096), true}, {gemvShape(4096, 1, 4096), false}} {
		plans, _ := Rank(cfg, c.g)
		at := slices.IndexFunc(plans, func(p *kernel.Plan) bool { return p.Schedule == kernel.GEMV })
		if at < 0 {
			t.Fatalf("%dx%dx%d: the GEMV is not among the ranked candidates", c.g.M, c.g.N, c.g.K)
		}
		tiles := slices.Delete(slices.Clone(plans), at, at+1)
		best, err := selectRanked(cfg, tiles, nil)
		if err != nil {
			t.Fatal(err)
		}
		chosen, err := selectRanked(cfg, plans, nil)
		if err != nil {
			t.Fatal(err)
		}
		gemv := simulateGEMV(t, cfg, c.g)
		faster := gemv.Cycles < best.Cycles
		t.Logf("%dx%dx%d: GEMV %d cycles, best tile %s %d; chosen %s", c.g.M, c.g.N, c.g.K,
			gemv.Cycles, best.Plan.Name(), best.Cycles, chosen.Plan.Name())
		if c.wins && !faster {
			t.Errorf("the GEMV (%d cycles) is not faster than %s (%d)", gemv.Cycles, best.Plan.Name(), best.Cycles)
		}
		if (chosen.Plan.Schedule == kernel.GEMV) != faster {
			t.Errorf("chosen %s; the GEMV faster than the tiles: %v", chosen.Plan.Name(), faster)
		}
	}
	sparse := gemvShape(1024, 1, 4096)
	sparse.Sparse = true
	plans, _ := Candidates(cfg, sparse)
	for _, p := range plans {
		if p.Schedule == kernel.GEMV {
			t.Fatal("a sparse GEMM got the GEMV as a candidate")
		}
	}
}

// A memory-bound GEMV is a stream of its bytes: its time is at least A,
// B and D over the sustained DRAM bandwidth, and on a large A (4096 x
// 4096 fp16, 32 MiB) within 20 % of it (measured +11.6 %,
// docs/log/2026-12-07-gemv.md); its DRAM reads are A and x once.
func TestGEMVAtTheDRAMBound(t *testing.T) {
	cfg := gemvCfg(t)
	g := gemvShape(4096, 1, 4096)
	r := simulateGEMV(t, cfg, g)
	d := demand.Of(cfg, r.Plan)
	bytes := float64(2 * (g.M*g.K + g.N*g.K + g.M*g.N))
	bound := bytes / d.DRAMBytesPerClk
	t.Logf("GEMV %d cycles, bytes over bandwidth %.0f (%+.1f %%), DRAM reads %d of %.0f bytes",
		r.Cycles, bound, 100*(float64(r.Cycles)/bound-1), r.Mem.DRAMReadBytes, bytes)
	if c := float64(r.Cycles); c < bound || c > 1.2*bound {
		t.Errorf("%d cycles, not within [1, 1.2] x the %.0f of its bytes over the DRAM bandwidth", r.Cycles, bound)
	}
	if rd := float64(r.Mem.DRAMReadBytes); rd < float64(2*(g.M*g.K+g.N*g.K)) || rd > 1.01*bytes {
		t.Errorf("DRAM reads %.0f bytes, want A and x once (%d)", rd, 2*(g.M*g.K+g.N*g.K))
	}
	if r.Breakdown.DRAMBandwidth+r.Breakdown.DRAMLatency < 0.5 {
		t.Errorf("breakdown %+v: less than half the FP32 pipe's time waits on DRAM", r.Breakdown)
	}
}

// More DRAM bandwidth is never slower for the GEMV, and on a
// memory-bound one (1024 x 1 x 4096) it is faster; a wider FP32 pipe
// (sm.fp32_lanes) is never slower, and faster where the FFMAs bind (N =
// 8).
func TestGEMVFasterWithMoreBandwidthAndLanes(t *testing.T) {
	if testing.Short() {
		t.Skip("six GEMV simulations")
	}
	slowerDown(t, gemvShape(1024, 1, 4096), "dram.bandwidth_gbps", "2000", "1555", "1000")
	slowerDown(t, gemvShape(1024, 8, 4096), "sm.fp32_lanes", "32", "16", "8")
}

// slowerDown simulates the GEMV of g at each value of key, widest first,
// and fails where a narrower value is not slower.
func slowerDown(t *testing.T, g kernel.Shape, key string, values ...string) {
	t.Helper()
	prev := uint64(0)
	for i, v := range values {
		c := simulateGEMV(t, gemvCfg(t, key+"="+v), g).Cycles
		t.Logf("%s=%s: %d cycles", key, v, c)
		if i > 0 && c <= prev {
			t.Errorf("%s=%s: %d cycles, not slower than the wider %d", key, v, c, prev)
		}
		prev = c
	}
}

// kernel.force takes the GEMV by name; a GEMM it cannot run is no
// candidate and says why (selection's error: exit 2 before anything
// runs), and the name takes no split suffix.
func TestGEMVPinnedByName(t *testing.T) {
	cfg := gemvCfg(t, "kernel.force_dense="+kernel.GEMVName)
	plans, _ := Candidates(cfg, gemvShape(4096, 4, 4096))
	if len(plans) != 1 || plans[0].Name() != kernel.GEMVName {
		t.Fatalf("pinned: candidates %d, want the GEMV alone", len(plans))
	}
	plans, rejected := Candidates(cfg, gemvShape(4096, 16, 4096))
	if len(plans) != 0 || len(rejected) != 1 || !strings.Contains(rejected[0], "N <= 8") {
		t.Errorf("pinned on N = 16: %d candidates, rejected %q; want none, saying N <= 8", len(plans), rejected)
	}
	if _, err := configs.Load(nil, []string{"kernel.force=" + kernel.GEMVName + "_splitk2"}); err == nil {
		t.Error("kernel.force=gemv_cudacore_splitk2 loaded")
	}
}

// The GEMV is ranked with the tiles but kept beside them: where it ranks
// among the kept, the kept tiles are still kernel.simulated_candidates
// many (no tile is displaced for its sake), so adding it never leaves a
// decode GEMM on a worse tile.
func TestGEMVKeptBesideTheTiles(t *testing.T) {
	cfg := gemvCfg(t)
	seen := false
	for _, g := range []kernel.Shape{gemvShape(1024, 1, 4096), gemvShape(4096, 1, 4096),
		gemvShape(128256, 1, 4096), gemvShape(4096, 8, 14336)} {
		plans, _ := Rank(cfg, g)
		tiles := 0
		for _, p := range plans {
			if p.Schedule == kernel.GEMV {
				seen = true
				continue
			}
			tiles++
		}
		if tiles != cfg.Kernel.SimulatedCandidates {
			t.Errorf("%dx%dx%d: %d tiles kept, want kernel.simulated_candidates = %d",
				g.M, g.N, g.K, tiles, cfg.Kernel.SimulatedCandidates)
		}
	}
	if !seen {
		t.Error("the GEMV ranked among the kept on none of the decode GEMMs")
	}
}
