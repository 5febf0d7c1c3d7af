package demand_test

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
)

func config(t *testing.T, sets ...string) *configs.Config {
	t.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	return ld.Config
}

// plan is g on the library tile named tile, split splitK ways.
func plan(t *testing.T, cfg *configs.Config, g kernel.Shape, tile string, splitK int) *kernel.Plan {
	t.Helper()
	for _, tc := range cfg.Kernel.Candidates {
		if tc.Name() == tile && tc.Supports(g.KernelMode(), g.Precision) {
			p, err := kernel.New(cfg, g, tc, splitK)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no library tile %s for %v", tile, g)
	return nil
}

func gemm(m, n, k int, prec tensorcore.Precision, sparse bool) kernel.Shape {
	g := kernel.Shape{M: m, N: n, K: k, Batch: 1, Precision: prec}
	if sparse {
		g.Sparse, g.Pattern = true, tensorcore.Pattern{N: 2, M: 4}
	}
	return g
}

// TestTensorCoreCyclesAtThePublishedRate: a k-step's MMAs cover the
// CTA's BM x BN x BK, and its tensor-core cycles are that many FMAs at
// the A100's published per-SM rates (shared/reference/hardware.md: FP16
// 1024 FMA/clk dense and 2048 sparse-effective, TF32 512 / 1024, INT8
// 2048 / 4096).
func TestTensorCoreCyclesAtThePublishedRate(t *testing.T) {
	cfg := config(t)
	for _, c := range []struct {
		prec   tensorcore.Precision
		sparse bool
		tile   string
		perClk int
	}{
		{tensorcore.FP16, false, "128x128x32_64x64_s5", 1024},
		{tensorcore.FP16, true, "128x128x64_64x64_s3", 2048},
		{tensorcore.TF32, false, "128x128x16_64x64_s5", 512},
		{tensorcore.INT8, true, "128x128x128_64x64_s3", 4096},
	} {
		p := plan(t, cfg, gemm(1024, 1024, 4096, c.prec, c.sparse), c.tile, 1)
		d := demand.Of(cfg, p)
		fmas := p.Tile.BM * p.Tile.BN * p.Tile.BK
		if got := d.MMAs * p.Inst.M * p.Inst.N * p.Inst.K; got != fmas {
			t.Errorf("%s %s: a k-step's MMAs cover %d FMAs, its tile %d", c.prec, p.Name(), got, fmas)
		}
		if want := float64(fmas) / float64(c.perClk); d.TCCycles != want {
			t.Errorf("%s %s: %.1f tensor-core cycles per k-step, want %.1f", c.prec, p.Name(), d.TCCycles, want)
		}
	}
}

// TestBytesFromTheShape: 1024x1024x1024 FP16 2:4 on 128x128x64 tiles,
// counted by hand: A keeps half its K (1 MiB), B and D 2 MiB each, 64
// output tiles of 16 k-steps, a stage of 8 KiB of A values and 16 KiB
// of B, and one 2:4 metadata byte per 4 kept A values (2 bits per kept
// value: 128 rows x 32 kept / 4); over the kernel, A's metadata is
// 1024 rows of 256 groups of 4, each group's two kept values' 2-bit
// indices (PTX ISA, mma.sp's sparsity metadata): 1024 x 256 x 4 bits,
// 128 KiB.
func TestBytesFromTheShape(t *testing.T) {
	cfg := config(t)
	p := plan(t, cfg, gemm(1024, 1024, 1024, tensorcore.FP16, true), "128x128x64_64x64_s3", 1)
	d := demand.Of(cfg, p)
	want := demand.Demand{ABytes: 1 << 20, MetaBytes: 1024 * 256 * 4 / 8, BBytes: 2 << 20, DBytes: 2 << 20, Tiles: 64,
		KSteps: 1024, MeanKSteps: 16, DTileBytes: 128 * 128 * 2, AccTileBytes: 128 * 128 * 4,
		EpilogueBytes: 128 * 128 * 2,
		Stage:         demand.Stage{A: 128 * 32 * 2, Meta: 128 * 32 / 4, B: 64 * 128 * 2}}
	got := d
	got.MMAs, got.TCCycles, got.Wavefronts, got.BankCycles, got.DRAMBytesPerClk = 0, 0, 0, 0, 0
	if got != want {
		t.Errorf("demand %+v\nwant   %+v", got, want)
	}
	// 1555 GB/s at 0.965 (the A100-40GB's config) over 1410 MHz.
	if r := 1555 * 0.965 / 1.41; d.DRAMBytesPerClk < r*0.999 || d.DRAMBytesPerClk > r*1.001 {
		t.Errorf("DRAM %.1f bytes per cycle, want %.1f", d.DRAMBytesPerClk, r)
	}
	split := plan(t, cfg, gemm(256, 256, 4096, tensorcore.FP16, false), "128x128x32_64x64_s5", 4)
	ds := demand.Of(cfg, split)
	if ds.EpilogueBytes != 128*128*4 {
		t.Errorf("split-K: a CTA's epilogue writes %.0f bytes, want its FP32 partials %d", ds.EpilogueBytes, 128*128*4)
	}
	// 4 output tiles, each 4 splits' 64 KiB of FP32 partials.
	if ds.PartialBytes != 1<<20 {
		t.Errorf("split-K: the reduction reads %.0f bytes of partials, want %d", ds.PartialBytes, 1<<20)
	}
}

// TestOperandBytesAsTheInstructionTierReadsThem: the operands' unique
// bytes are the regions the instruction tier's CTAs load, by class
// (kernel.CTA.StageRegions, each region once however many CTAs share
// it): A's values, the metadata (A's, a dual-side B's, V:N:M's column
// indices) and B; and the split-K partials are those its reduction reads
// (kernel.Plan.OutputRegion of every split of every output tile of every
// batch entry, as gpu's reduceTile). The shapes have a ragged M and N
// and a batch of 3, in FP16, INT8 and TF32 patterns, dual-side 2:4 and
// V:N:M 64:2:8 (whose B, the gathered rows, is not compared: V blocks
// read overlapping rows of B). A named shape is counted by hand too:
// 1000 x 200 x 1024, batch 3, split 4 ways, reduces 4 x 3 x 1000 x 200
// FP32 partials.
func TestOperandBytesAsTheInstructionTierReadsThem(t *testing.T) {
	cfg := config(t)
	vnm, err := tensorcore.ParsePattern("64:2:8")
	if err != nil {
		t.Fatal(err)
	}
	dual := gemm(1000, 264, 1024, tensorcore.FP16, true)
	dual.Dual = true
	gather := gemm(256, 520, 1024, tensorcore.FP16, true)
	gather.Pattern, gather.Layout = vnm, kernel.Layout{RowB: true}
	tf32 := gemm(264, 136, 512, tensorcore.TF32, true)
	tf32.Pattern = tensorcore.Pattern{N: 1, M: 2}
	for _, c := range []struct {
		g      kernel.Shape
		tile   string
		splitK int
	}{
		{gemm(1000, 200, 1024, tensorcore.FP16, true), "128x128x64_64x64_s3", 4},
		{gemm(1000, 200, 1024, tensorcore.FP16, false), "128x128x32_64x64_s5", 4},
		{gemm(300, 520, 2048, tensorcore.INT8, true), "128x128x128_64x64_s3", 2},
		{tf32, "128x128x32_64x64_s3", 1},
		{dual, "128x128x64_64x64_s3", 1},
		{gather, "64x128x64_32x64_s4", 1},
	} {
		c.g.Batch = 3
		p := plan(t, cfg, c.g, c.tile, c.splitK)
		d := demand.Of(cfg, p)
		loads := regionBytes(p)
		for _, o := range []struct {
			class memory.Class
			model float64
		}{{memory.AValues, d.ABytes}, {memory.AMeta, d.MetaBytes}, {memory.BOperand, d.BBytes}} {
			if o.class == memory.BOperand && c.g.Pattern == vnm {
				continue
			}
			if o.model != float64(loads[o.class]) {
				t.Errorf("%v on %s: %.0f bytes of %s, the CTAs load %d", c.g, p.Name(), o.model, o.class, loads[o.class])
			}
		}
		var partials uint64
		if p.Schedule == kernel.ParallelSplitK {
			for b := range c.g.Batch {
				for tm := range p.TilesM {
					for tn := range p.TilesN {
						for s := range p.SplitK {
							partials += p.OutputRegion(b, tm, tn, s, kernel.BaseSplit, kernel.AccumulatorBytes).Bytes()
						}
					}
				}
			}
		}
		if d.PartialBytes != float64(partials) {
			t.Errorf("%v on %s: %.0f bytes of split-K partials, the reduction reads %d", c.g, p.Name(), d.PartialBytes, partials)
		}
		if c.g.M == 1000 && c.splitK == 4 && d.PartialBytes != 4*3*1000*200*4 {
			t.Errorf("%v: %.0f bytes of partials, want %d", c.g, d.PartialBytes, 4*3*1000*200*4)
		}
	}
}

// regionBytes is the bytes of the global regions p's CTAs load over
// their k-steps, by class, each region (by its base address) once.
func regionBytes(p *kernel.Plan) map[memory.Class]uint64 {
	seen := map[memory.Class]map[uint64]uint64{}
	for i := range p.CTAs {
		cta := kernel.NewCTA(p, i)
		for k := range cta.Steps {
			for _, r := range cta.StageRegions(k) {
				if seen[r.Class] == nil {
					seen[r.Class] = map[uint64]uint64{}
				}
				seen[r.Class][r.Region.Base] = r.Region.Bytes()
			}
		}
	}
	out := map[memory.Class]uint64{}
	for c, regions := range seen {
		for _, b := range regions {
			out[c] += b
		}
	}
	return out
}

// TestBankCyclesAtLeastTheBytes: shared memory moves at most
// shared_memory.bytes_per_clk, so a k-step's bank cycles are at least
// its bytes: every warp's A (kept) and B fragments and the stage's fills
// (more where a pattern's wavefronts move less than every bank's bytes).
func TestBankCyclesAtLeastTheBytes(t *testing.T) {
	cfg := config(t)
	bpc := float64(cfg.Memory.SharedMemory.BytesPerClk)
	for _, c := range []struct {
		sparse bool
		tile   string
	}{{false, "128x128x32_64x64_s5"}, {true, "128x128x64_64x64_s3"}} {
		p := plan(t, cfg, gemm(2048, 2048, 2048, tensorcore.FP16, c.sparse), c.tile, 1)
		d := demand.Of(cfg, p)
		tl := p.Tile
		kept := tl.BK
		if c.sparse {
			kept /= 2
		}
		frag := p.Warps * (tl.WarpM*kept + tl.WarpN*tl.BK) * p.ElemBytes
		floor := float64(frag+p.AStageB+p.BStageB) / bpc
		if d.BankCycles < floor {
			t.Errorf("%s: %.1f bank cycles per k-step for %.1f cycles of bytes", p.Name(), d.BankCycles, floor)
		}
	}
}

// TestBothReadersReadIt: the pre-model (selection.Estimate) and the fast
// tier (fast.Time) take a plan's demands from the demand model, and from
// nowhere else: each reads it, and a change to the model moves both
// (compute-bound demands made 4x slower, or DRAM made 8x slower, on a
// compute-bound and a memory-bound plan), and undoing it restores both.
func TestBothReadersReadIt(t *testing.T) {
	// No launch gap: it is a fixed part that no demand moves, and the
	// 1.5x threshold below is about the part the demand sets.
	cfg := config(t, "gpu.sm_count=16", "sm.kernel_launch_latency=0")
	plans := []*kernel.Plan{
		plan(t, cfg, gemm(2048, 2048, 2048, tensorcore.FP16, true), "128x128x64_64x64_s3", 1),
		plan(t, cfg, gemm(4096, 128, 256, tensorcore.FP16, false), "128x128x32_64x64_s5", 1),
	}
	times := func(p *kernel.Plan) (float64, uint64) {
		r, err := fast.Time(cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		return selection.Estimate(cfg, p), r.Cycles
	}
	calls := 0
	defer demand.SetPerturb(nil)
	demand.SetPerturb(func(d demand.Demand) demand.Demand { calls++; return d })
	for _, p := range plans {
		calls = 0
		selection.Estimate(cfg, p)
		if calls == 0 {
			t.Errorf("%s: the pre-model does not read the demand model", p.Name())
		}
		calls = 0
		if _, err := fast.Time(cfg, p); err != nil {
			t.Fatal(err)
		}
		if calls == 0 {
			t.Errorf("%s: the fast tier does not read the demand model", p.Name())
		}
	}
	for _, c := range []struct {
		what string
		f    func(demand.Demand) demand.Demand
	}{
		{"tensor cores and banks 4x slower", func(d demand.Demand) demand.Demand { d.TCCycles *= 4; d.BankCycles *= 4; return d }},
		{"DRAM 8x slower", func(d demand.Demand) demand.Demand { d.DRAMBytesPerClk /= 8; return d }},
	} {
		for i, p := range plans {
			demand.SetPerturb(nil)
			e0, f0 := times(p)
			demand.SetPerturb(c.f)
			e1, f1 := times(p)
			demand.SetPerturb(nil)
			e2, f2 := times(p)
			t.Logf("%s, %s: pre-model %.0f -> %.0f, fast tier %d -> %d", c.what, p.Name(), e0, e1, f0, f1)
			// The first plan is compute-bound, the second memory-bound:
			// each perturbation must move at least the plan it binds.
			binds := (i == 0) == (c.what[0] == 't')
			if binds && (e1 <= 1.5*e0 || float64(f1) <= 1.5*float64(f0)) {
				t.Errorf("%s, %s: pre-model %.0f -> %.0f, fast tier %d -> %d: not both moved",
					c.what, p.Name(), e0, e1, f0, f1)
			}
			if e1 < e0 || f1 < f0 {
				t.Errorf("%s, %s: a slower demand made a reader faster", c.what, p.Name())
			}
			if e2 != e0 || f2 != f0 {
				t.Errorf("%s: undone, the readers give %.0f and %d, not %.0f and %d", p.Name(), e2, f2, e0, f0)
			}
		}
	}
}
