package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// gemmShape is one GEMM to run: D[M x N] = A[M x K] x B[K x N], Batch
// times, in one mode.
type gemmShape struct {
	M, N, K, Batch int
	Precision      tensorcore.Precision
	Sparse         bool
	// Pattern is the N:M pattern of the compressed operand (the A of the
	// MMA) when Sparse; Dual compresses B too, with Products multiplies
	// per MMA from the masks' intersection (0: independent masks).
	Pattern  tensorcore.Pattern
	Dual     bool
	Products int
	Masks    string // dual-side: where the masks came from
}

// mode is the datapath the GEMM runs on.
func (g gemmShape) mode() tensorcore.Mode {
	if g.Sparse {
		return tensorcore.Sparse
	}
	return tensorcore.Dense
}

// kernelPlan is a GEMM mapped onto one tile configuration: everything the
// SM needs to run its CTAs.
type kernelPlan struct {
	// kSampled: a sample of K extrapolation (withKSteps), not the plan
	// itself.
	kSampled bool

	shape  gemmShape
	tile   configs.TileConfig
	splitK int

	inst       tensorcore.Shape // MMA instruction shape
	pattern    tensorcore.Pattern
	dp         tensorcore.Datapath // the tensor-core datapath the MMAs run on
	metaBits   int                 // metadata bits per kept value
	elemBytes  int
	outBytes   int
	tilesM     int
	tilesN     int
	kSteps     int // k-steps of a CTA of every split but the last
	lastKSteps int // k-steps of a CTA of the last split (its share and the rest)
	kPerSplit  int // logical K per split but the last (kSteps x BK)
	paddedK    int // K rounded up to the sparse kernel's granularity
	ctas       int
	warps      int
	occupancy  int // CTAs per SM
	limit      string
	swizzle    int
	aStageB    int // bytes of A values per stage
	metaStageB int // bytes of A metadata per stage
	bStageB    int // bytes of B per stage
	// Per warp per k-step:
	groups     int // k-groups (instruction K slices) per k-step
	mmaPerGrp  int // MMAs per k-group
	fragBytes  int // ldmatrix bytes per k-step (A values + B)
	metaFragB  int // metadata bytes read from shared memory per k-step
	regsPerThr int
	beta       float64        // epilogue reads C when not 0
	programs   []*isa.Program // per warp, built on first use
	// Shared-memory layouts (CUTLASS's sm80 swizzles) and the warp's
	// ldmatrix patterns over them, per k-step.
	layoutA, layoutB, layoutE memory.Layout
	ldsm, metaLdsm            memory.Pattern
	ldsmA, ldsmB              memory.Pattern // per operand
	fillWaves                 int            // wavefronts of writing one stage's fills
}

// program is warp w's instruction stream (the same for every CTA).
func (p *kernelPlan) program(w int) *isa.Program {
	if p.programs == nil {
		p.programs = make([]*isa.Program, p.warps)
	}
	if p.programs[w] == nil {
		p.programs[w] = buildProgram(p, w)
	}
	return p.programs[w]
}

// accumulatorBytes is the size of one accumulator element (FP32 or INT32).
const accumulatorBytes = 4

// planKernel maps a GEMM onto a tile; it fails when the tile cannot run it.
func planKernel(cfg *configs.Config, g gemmShape, t configs.TileConfig, splitK int) (*kernelPlan, error) {
	p, err := planFit(cfg, g, t, splitK)
	if err != nil {
		return nil, err
	}
	p.smemPatterns(cfg.Memory)
	return p, nil
}

// planFit is planKernel without the shared-memory access patterns: all
// that decides whether the tile can run the GEMM (sim.Check asks only
// that), at a small part of the cost.
func planFit(cfg *configs.Config, g gemmShape, t configs.TileConfig, splitK int) (*kernelPlan, error) {
	p := &kernelPlan{shape: g, tile: t, splitK: splitK,
		elemBytes: g.Precision.ElementBytes(),
		// D is stored in the input type (FP16/BF16, FP32 for TF32, INT8).
		outBytes: g.Precision.ElementBytes(),
		beta:     cfg.Kernel.Beta}
	prec, err := cfg.TensorCore.Get(g.Precision)
	if err != nil {
		return nil, err
	}
	if err := p.setInstruction(prec, g); err != nil {
		return nil, err
	}
	if t.BK%p.inst.K != 0 {
		return nil, fmt.Errorf("tile %s: bk %d is not a multiple of the "+
			"instruction K %d", t.Name(), t.BK, p.inst.K)
	}
	if t.WarpM%p.inst.M != 0 || t.WarpN%p.inst.N != 0 {
		return nil, fmt.Errorf("tile %s: warp tile not a multiple of %s",
			t.Name(), p.inst)
	}
	if err := p.grid(cfg); err != nil {
		return nil, err
	}
	p.stageBytes()
	p.warpWork()
	if err := p.fit(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *kernelPlan) setInstruction(prec *tensorcore.PrecisionConfig, g gemmShape) error {
	pat := g.Pattern
	if g.Sparse && pat == (tensorcore.Pattern{}) { // not set: the config's
		var err error
		if pat, err = tensorcore.ParsePattern(prec.SparsePattern); err != nil {
			return err
		}
	}
	dp, err := tensorcore.Derive(prec, g.Precision, p.mode(), pat, g.Products)
	if err != nil {
		return err
	}
	p.dp, p.inst, p.pattern = dp, dp.Shape, dp.Pattern
	if g.Sparse {
		p.metaBits = tensorcore.MetadataBits(p.pattern)
	}
	return nil
}

// mode is the tensor-core datapath of the plan's MMAs.
func (p *kernelPlan) mode() tensorcore.Mode {
	switch {
	case p.shape.Dual:
		return tensorcore.DualSide
	case p.shape.Sparse:
		return tensorcore.Sparse
	}
	return tensorcore.Dense
}

// mmaRequest is a run of count MMAs of the plan, for its tensor cores.
func (p *kernelPlan) mmaRequest(count int) tensorcore.Request {
	return tensorcore.Request{Mode: p.mode(), Precision: p.shape.Precision,
		Pattern: p.pattern, Products: p.shape.Products, Count: count}
}

// metaBytes is the metadata of rows x keptCols kept values (bits rounded
// up to bytes).
func (p *kernelPlan) metaBytes(rows, keptCols int) int {
	return (rows*keptCols*p.metaBits + 7) / 8
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// grid sizes the launch: tiles, split-K ranges and k-steps. A sparse
// kernel needs K in whole tiles (libraries pad A and B with zeros along
// K); a dense one predicates the last partial k-step.
//
// Split-K partitions K as CUTLASS's parallel split-K kernel
// (kernel::GemmSplitKParallel) does: every split but the last gets
// floor(full k-tiles / splits) k-steps and the last takes the rest,
// including a partial k-tile. Every split then has at least one k-step
// and K need not divide evenly.
func (p *kernelPlan) grid(cfg *configs.Config) error {
	t, g := p.tile, p.shape
	p.tilesM = ceilDiv(g.M, t.BM)
	p.tilesN = ceilDiv(g.N, t.BN)
	p.paddedK = g.K
	if g.Sparse {
		p.paddedK = ceilDiv(g.K, t.BK) * t.BK
	}
	tiles := ceilDiv(p.paddedK, t.BK)
	p.kSteps = tiles
	if p.splitK > 1 {
		p.kSteps = p.paddedK / t.BK / p.splitK
	}
	if p.kSteps < 1 {
		return fmt.Errorf("tile %s: split-K %d needs K >= %d, K is %d",
			t.Name(), p.splitK, p.splitK*t.BK, g.K)
	}
	p.lastKSteps = tiles - (p.splitK-1)*p.kSteps
	p.kPerSplit = p.kSteps * t.BK
	p.ctas = p.tilesM * p.tilesN * p.splitK * g.Batch
	p.warps = t.Warps()
	p.swizzle = swizzleWidth(p.tilesN)
	return nil
}

// stepsOf is the k-steps a CTA of split runs.
func (p *kernelPlan) stepsOf(split int) int {
	if split == p.splitK-1 {
		return p.lastKSteps
	}
	return p.kSteps
}

// totalKSteps is the k-steps of all the kernel's CTAs.
func (p *kernelPlan) totalKSteps() int {
	perTile := (p.splitK-1)*p.kSteps + p.lastKSteps
	return p.tilesM * p.tilesN * p.shape.Batch * perTile
}

// withKSteps is the plan cut to k k-steps per CTA (the last split keeps
// its extra k-steps), for samples that are shorter in K.
func (p *kernelPlan) withKSteps(k int) *kernelPlan {
	cut := *p
	cut.lastKSteps = k + p.lastKSteps - p.kSteps
	cut.kSteps = k
	cut.kSampled = true
	return &cut
}

// swizzleWidth is the band width, in tile columns, of CUTLASS's
// GemmIdentityThreadblockSwizzle<8> (get_log_tile): 8 columns when the grid
// has at least 6, 4 from 3, 2 from 2, else 1. Thresholds as CUTLASS picks
// them, so that bands do not launch too many no-op CTAs.
func swizzleWidth(tilesN int) int {
	switch {
	case tilesN >= 6:
		return 8
	case tilesN >= 3:
		return 4
	case tilesN >= 2:
		return 2
	}
	return 1
}

// stageBytes sizes one cp.async stage: A values (compressed when sparse),
// A metadata in the reordered tile-contiguous layout, and B.
func (p *kernelPlan) stageBytes() {
	t := p.tile
	keptK := t.BK * p.pattern.N / p.pattern.M
	p.aStageB = t.BM * keptK * p.elemBytes
	if p.shape.Sparse {
		p.metaStageB = p.metaBytes(t.BM, keptK)
	}
	p.bStageB = t.BN * t.BK * p.elemBytes
	if p.shape.Dual { // B compressed too, its metadata after A's
		p.bStageB = t.BN * keptK * p.elemBytes
		p.metaStageB += p.metaBytes(t.BN, keptK)
	}
}

// warpWork sizes one warp's work per k-step: fragments loaded with
// ldmatrix (A values, B, and the metadata words) and MMAs issued.
func (p *kernelPlan) warpWork() {
	t := p.tile
	p.groups = t.BK / p.inst.K
	p.mmaPerGrp = (t.WarpM / p.inst.M) * (t.WarpN / p.inst.N)
	keptInstK := p.inst.K * p.pattern.N / p.pattern.M
	aFrag := t.WarpM * keptInstK * p.elemBytes
	bFrag := t.WarpN * p.inst.K * p.elemBytes
	if p.shape.Dual {
		bFrag = t.WarpN * keptInstK * p.elemBytes
	}
	p.fragBytes = p.groups * (aFrag + bFrag)
	if p.shape.Sparse {
		p.metaFragB = p.groups * p.metaBytes(t.WarpM, keptInstK)
	}
	if p.shape.Dual {
		p.metaFragB += p.groups * p.metaBytes(t.WarpN, keptInstK)
	}
	acc := t.WarpM * t.WarpN / 32
	frag := 2 * (aFrag + bFrag) / 4 / 32
	p.regsPerThr = min(255, acc+frag+40)
}

// smemPatterns lays the stage's tiles out as CUTLASS's sm80 TN kernels
// do (A and B crosswise over K, the metadata column-major) and derives the
// wavefronts of one warp's ldmatrix loads per k-step from them.
func (p *kernelPlan) smemPatterns(mc memory.Config) {
	cfg := mc.SharedMemory
	t := p.tile
	bits := 8 * p.elemBytes
	keptK := t.BK * p.pattern.N / p.pattern.M
	p.layoutA = memory.OperandLayout(bits, keptK)
	p.layoutB = memory.OperandLayout(bits, t.BK)
	p.layoutE = memory.Layout{Kind: memory.ColumnMajor, ElemBits: 16,
		Contig: max(1, p.metaStageB/2)}
	a := memory.FragmentPattern("ldsm A", p.layoutA, t.WarpM, keptK, cfg)
	b := memory.FragmentPattern("ldsm B", p.layoutB, t.WarpN, t.BK, cfg)
	p.ldsmA, p.ldsmB = a, b
	p.ldsm = memory.Pattern{Name: "ldsm.x4 A+B",
		BytesPerInstr: a.BytesPerInstr + b.BytesPerInstr,
		Wavefronts:    a.Wavefronts + b.Wavefronts}
	if p.metaFragB > 0 {
		p.metaLdsm = memory.PatternFromAddrs("ldsm E",
			p.layoutE.VectorAddrs(0, 0, p.metaFragB), 16, cfg)
	}
	p.fillWaves = p.stageFillWaves(mc)
}

// stageFillWaves is the bank-array wavefronts of writing one full stage
// as its lines arrive in crossbar packets (rows line-aligned, as the
// operands of a GEMM whose K is a multiple of 64 elements are).
func (p *kernelPlan) stageFillWaves(mc memory.Config) int {
	f := memory.NewFiller(mc)
	t := p.tile
	const pitch = 1 << 16
	keptK := t.BK * p.pattern.N / p.pattern.M
	waves := f.Plan(memory.Region{Rows: t.BM, RowBytes: keptK * p.elemBytes,
		Pitch: pitch}, p.layoutA).Wavefronts
	waves += f.Plan(memory.Region{Rows: t.BN, RowBytes: t.BK * p.elemBytes,
		Pitch: pitch}, p.layoutB).Wavefronts
	if p.metaStageB > 0 {
		waves += f.Plan(memory.Region{Rows: 1, RowBytes: p.metaStageB,
			Pitch: pitch}, p.layoutE).Wavefronts
	}
	return waves
}

// smemLayout is the shared-memory layout of a stage part.
func (p *kernelPlan) smemLayout(c memory.Class) memory.Layout {
	switch c {
	case memory.AValues:
		return p.layoutA
	case memory.AMeta:
		return p.layoutE
	}
	return p.layoutB
}

// smemPerCTA is the shared memory of one CTA: its cp.async stages.
func (p *kernelPlan) smemPerCTA() int {
	return p.tile.Stages * (p.aStageB + p.metaStageB + p.bStageB)
}

// fit computes occupancy from the SM's limits and fails when not even one
// CTA fits.
func (p *kernelPlan) fit(cfg *configs.Config) error {
	sm := cfg.SM
	threads := p.warps * 32
	smemKB := cfg.Memory.SharedMemory.CarveoutKB
	limits := []struct {
		name string
		n    int
	}{
		{"cta slots", sm.MaxCTAs},
		{"threads", sm.MaxThreads / threads},
		{"warps", sm.MaxWarps / p.warps},
		{"registers", sm.Registers / (p.regsPerThr * threads)},
		{"shared memory", smemKB * 1024 / max(1, p.smemPerCTA())},
	}
	p.occupancy = 1 << 30
	for _, l := range limits {
		if l.n < p.occupancy {
			p.occupancy, p.limit = l.n, l.name
		}
	}
	if p.occupancy < 1 {
		return fmt.Errorf("tile %s: one CTA needs %d KB of shared memory "+
			"(%d stages), more than the %d KB carve-out", p.tile.Name(),
			ceilDiv(p.smemPerCTA(), 1024), p.tile.Stages, smemKB)
	}
	return nil
}

// name is the kernel identifier reported in results.
func (p *kernelPlan) name() string {
	n := p.tile.Name()
	if p.splitK > 1 {
		n += fmt.Sprintf("_splitk%d", p.splitK)
	}
	return n
}

// ctaCoord maps a CTA's launch index to its output tile and K split, in
// CUTLASS's rasterization order: bands of p.swizzle tile columns (N),
// walked row by row (M), so that co-resident CTAs share A and B tiles and
// a band's B columns stay in L2 while it walks all of M. CUTLASS launches
// no-op CTAs where the last band is narrower; they are skipped here.
func (p *kernelPlan) ctaCoord(i int) (batch, tm, tn, split int) {
	perGEMM := p.tilesM * p.tilesN
	split = i / (perGEMM * p.shape.Batch)
	rest := i % (perGEMM * p.shape.Batch)
	batch = rest / perGEMM
	t := rest % perGEMM
	band := t / (p.swizzle * p.tilesM)
	inBand := t % (p.swizzle * p.tilesM)
	cols := min(p.swizzle, p.tilesN-band*p.swizzle)
	tn = band*p.swizzle + inBand%cols
	tm = inBand / cols
	return batch, tm, tn, split
}

// describe names a simulation of the plan: GEMM, mode and kernel.
func (p *kernelPlan) describe() string {
	return fmt.Sprintf("%dx%dx%d", p.shape.M, p.shape.N, p.shape.K) +
		fmt.Sprintf("x%d %s %s %s ctas=%d ksteps=%d", p.shape.Batch,
			p.shape.Precision, p.shape.mode(), p.name(), p.ctas, p.lastKSteps)
}
