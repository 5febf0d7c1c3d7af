// Package demand is the one per-k-step demand model of a kernel plan:
// what one CTA's k-step asks of its SM's tensor cores, shared-memory
// banks and crossbar port and of the L2, and what the whole kernel reads
// from and writes to memory. Both analytical readers of a plan take
// their costs from it: the pre-model that ranks candidate kernels
// (selection.Estimate) and the analytical tier (sim/fast). Each keeps
// only what is its own: the pre-model its ranking score, the fast tier
// its overlap of waves, prologues, epilogues and the L2's state.
//
// Every field is counted from the plan (its tiles, warps, MMA
// instruction, stage bytes and ldmatrix patterns, which sim/kernel
// derives) and the config keys the instruction tier reads on the same
// path; the model holds no fitted constant and times nothing.
package demand

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
)

// Demand is one plan's demands: per k-step of one CTA, and per kernel.
type Demand struct {
	// MMAs is the MMA instructions of one CTA's k-step, over its warps.
	MMAs int
	// TCCycles is the tensor-core cycles of one CTA's k-step on its SM:
	// its MMAs at the datapath's issue interval, spread over the SM's
	// sub-partitions (one tensor core each).
	TCCycles float64
	// FMACycles is the FP32-pipe cycles of one CTA's k-step on its SM
	// (a CUDA-core GEMV's FFMAs and conversions at 32 / sm.fp32_lanes
	// cycles each, spread over the sub-partitions; 0 for a tile plan).
	FMACycles float64
	// Wavefronts is the shared-memory wavefronts of one CTA's k-step:
	// every warp's ldmatrix of operand values and metadata, and the
	// writes of one stage's fills into the bank array.
	Wavefronts int
	// BankCycles is the shared memory's cycles for Wavefronts: each
	// wavefront moves every bank's bytes, at the shared memory's bytes
	// per clock.
	BankCycles float64
	// Stage is the bytes one stage (one k-step's operands) copies from
	// L2 through the SM's crossbar port into shared memory.
	Stage Stage

	// KSteps is the k-steps of all the kernel's CTAs, MeanKSteps those
	// of one CTA on average.
	KSteps     int
	MeanKSteps float64
	// ABytes, MetaBytes and BBytes are the operands' unique bytes, what
	// the kernel must read from DRAM at least, over the batch: A's kept
	// values (its N:M share of the padded K); the sparsity metadata (every
	// compressed row's kept values' indices, at the pattern's metadata
	// bits: tensorcore.Pattern.MetadataBitsFor; A's rows, and B's too
	// when dual-side; with V:N:M's column indices, one set per tile row
	// and k-step as the gather kernel reads them; 0 dense) and B (its
	// kept values when dual-side). For V:N:M, B is the gathered K's
	// share, the rows one V block reads.
	ABytes, MetaBytes, BBytes float64
	// DBytes is the bytes of D the kernel writes (M x N x the output
	// element, over the batch).
	DBytes float64
	// DTileBytes is one output tile of D; AccTileBytes its FP32 (INT32)
	// accumulators, what the staged epilogue moves through shared memory
	// and one split's partials under split-K; EpilogueBytes what one
	// CTA's epilogue writes: its partials under parallel split-K, else its
	// tile of D.
	DTileBytes, AccTileBytes, EpilogueBytes float64
	// Tiles is the output tiles over the batch (each reduced once under
	// split-K), and PartialBytes the FP32 (INT32) partials the parallel
	// split-K reduction reads: every split's M x N accumulators of every
	// batch entry, as the instruction tier reads them (each output tile's
	// region clipped at the matrix's edge: kernel.Plan.OutputRegion); 0
	// without it.
	Tiles        int
	PartialBytes float64

	// DRAMBytesPerClk is the DRAM's sustained bytes per cycle of the
	// GPU's clock (dram.bandwidth_gbps x dram.efficiency at
	// gpu.clock_mhz).
	DRAMBytesPerClk float64
}

// Stage is one stage's bytes by operand: A's values, A's metadata (and
// the V:N:M kernel's column indices) and B.
type Stage struct{ A, Meta, B int }

// Bytes is the stage's bytes over its operands.
func (s Stage) Bytes() float64 { return float64(s.A + s.Meta + s.B) }

// OperandBytes is the operands' unique bytes: A's values, the sparsity
// metadata and B.
func (d Demand) OperandBytes() float64 { return d.ABytes + d.MetaBytes + d.BBytes }

// OperandBytesPerKStep is the operands' unique bytes per k-step of a
// CTA: the DRAM reads a k-step brings on average, every operand byte
// read once.
func (d Demand) OperandBytesPerKStep() float64 { return d.OperandBytes() / float64(d.KSteps) }

// metaBytes is a sparse plan's unique metadata bytes (Demand.MetaBytes).
func metaBytes(p *kernel.Plan) float64 {
	g := p.Shape
	rows := g.M
	if g.Dual {
		rows += g.N
	}
	rowBits := p.Pattern.MetadataBitsFor(p.Pattern.Kept(p.PaddedK))
	colIdx := p.TilesM * p.PaddedK * p.Format.ColumnIndexBits() // 0 but for V:N:M
	return float64(g.Batch) * (float64(rows*rowBits) + float64(colIdx)) / 8
}

// perturb, nil outside this package's tests, changes every demand Of
// returns: the seam through which a test shows that the model's readers
// move with it (export_test.go).
var perturb func(Demand) Demand

// Of is plan p's demands under cfg (the config p was planned with).
func Of(cfg *configs.Config, p *kernel.Plan) Demand {
	sh := cfg.Memory.SharedMemory
	g := p.Shape
	mmas := p.Warps * p.Groups * p.MMAPerGroup
	wavefronts := p.Warps*(p.LDSM.Wavefronts+p.MetaLDSM.Wavefronts) + p.FillWaves
	tile := p.Tile.BM * p.Tile.BN
	d := Demand{
		MMAs:            mmas,
		TCCycles:        float64(mmas*p.Datapath.Interval) / float64(cfg.SM.SubPartitions),
		FMACycles:       float64(p.FMAPerKStep()*kernel.FMAInterval(cfg)) / float64(cfg.SM.SubPartitions),
		Wavefronts:      wavefronts,
		BankCycles:      float64(wavefronts*sh.Banks*sh.BankBytes) / float64(sh.BytesPerClk),
		Stage:           Stage{A: p.AStageB, Meta: p.MetaStageB, B: p.BStageB},
		KSteps:          p.TotalKSteps(),
		MeanKSteps:      float64(p.TotalKSteps()) / float64(p.CTAs),
		ABytes:          float64(g.Batch) * float64(g.M*p.Pattern.Kept(p.PaddedK)*p.ElemBytes),
		BBytes:          float64(g.Batch) * float64(g.N*p.PaddedK*p.ElemBytes),
		DBytes:          float64(g.Batch) * float64(g.M*g.N*p.OutBytes),
		DTileBytes:      float64(tile * p.OutBytes),
		AccTileBytes:    float64(tile * kernel.AccumulatorBytes),
		Tiles:           p.TilesM * p.TilesN * g.Batch,
		DRAMBytesPerClk: cfg.Memory.DRAM.SustainedBytesPerCycle(float64(cfg.GPU.ClockMHz) * 1e6),
	}
	if g.Sparse {
		d.MetaBytes = metaBytes(p)
	}
	if g.Dual {
		d.BBytes = float64(g.Batch) * float64(g.N*p.Pattern.Kept(p.PaddedK)*p.ElemBytes)
	}
	d.EpilogueBytes = d.DTileBytes
	if p.Schedule == kernel.ParallelSplitK {
		d.EpilogueBytes = d.AccTileBytes
		d.PartialBytes = float64(p.SplitK*g.Batch) * float64(g.M*g.N*kernel.AccumulatorBytes)
	}
	if perturb != nil {
		d = perturb(d)
	}
	return d
}
