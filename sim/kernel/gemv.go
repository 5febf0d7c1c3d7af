package kernel

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

// The CUDA-core GEMV: the kernel TensorRT-LLM runs for a dense GEMM of a
// few tokens (cudaCoreGemm in cpp/tensorrt_llm/kernels/cudaCoreGemm/,
// read in its copy microsoft/onnxruntime
// onnxruntime/contrib_ops/cuda/llm/weightOnlyBatchedGemv/cudaCoreGemm.cu
// at dd712842feebf4fda7006da7fa884d1414a87259; its row-per-warp-group
// structure is CUTLASS's row-major kernel::Gemv, include/cutlass/gemm/
// kernel/gemv.h at f079619f5e9f4659c030e538803c940a2a7c34df, which the
// same library generalises from one vector to TILE_M of them).
// cudaCoreGemmLauncher instantiates TILE_N = 2 weight rows per CTA and
// BLOCK_SIZE = 128 threads, for every token count m = 1..16, for FP16,
// BF16, FP32 and FP8 activations. In stcsim's terms (D = A x B, A the
// weights, M x K; B the N tokens, K-major) a CTA computes 2 rows of D for
// all N columns:
//
//   - each k-step covers kTileK = 128 x kStepK elements of K, kStepK the
//     elements of one 16-byte vector: every thread loads one 16-B vector
//     of each of its CTA's 2 rows of A (LDG.128) and of each of the N
//     tokens' B, straight into registers (no shared memory), converts
//     them to FP32 and does 2 x N x kStepK FFMAs;
//   - the epilogue reduces each of the 2N sums over the warp with
//     cub::WarpReduce (5 SHFL.BFLY + FADD levels), lane 0 writes it to
//     shared memory, the CTA syncs, and threads 0..2N-1 add the 4 warps'
//     sums (LDS x 4, FADD x 3), scale by alpha and store their element of
//     D.
//
// A warp's LDG.128 covers 512 contiguous bytes, the chunk of a k-step's
// operand tile that warp w's threads read: chunk r x 4 + w of A's
// 2-row tile, n x 4 + w of B's N-row tile (chunkOf with rows of
// kTileK x element bytes = 4 chunks).

// GEMVName is the CUDA-core GEMV's kernel name, as results print it and
// kernel.force takes it.
const GEMVName = configs.GEMVName

// GEMVMaxN is the most columns (tokens) the GEMV is offered for: the
// issue's decode batches 1-8 (TensorRT-LLM instantiates up to 16).
const GEMVMaxN = 8

// The GEMV's CTA (cudaCoreGemmLauncher's template arguments).
const (
	gemvRows    = 2   // TILE_N: rows of A (outputs) per CTA
	gemvThreads = 128 // BLOCK_SIZE
	gemvWarps   = gemvThreads / 32
	gemvVec     = 16 // bytes of one LDG.128 per thread
	// gemvShflLevels is cub::WarpReduce's butterfly levels over 32 lanes.
	gemvShflLevels = 5
)

// GEMVKStep is the elements of K one k-step of the GEMV covers for
// elements of elemBytes: kTileK = BLOCK_SIZE x kStepK.
func GEMVKStep(elemBytes int) int { return gemvThreads * gemvVec / elemBytes }

// NewGEMV plans g on the CUDA-core GEMV, or says why the kernel cannot
// run it (TensorRT-LLM's dispatcher declines the same shapes).
func NewGEMV(cfg *configs.Config, g Shape) (*Plan, error) {
	if err := gemvRuns(cfg, g); err != nil {
		return nil, err
	}
	e := g.Precision.ElementBytes()
	bk := GEMVKStep(e)
	p := &Plan{Shape: g, SplitK: 1, Schedule: GEMV, ElemBytes: e, OutBytes: e,
		beta: cfg.Kernel.Beta, maskSeed: cfg.TensorCore.MaskSeed,
		Tile: configs.TileConfig{BM: gemvRows, BN: g.N, BK: bk, WarpM: gemvRows,
			WarpN: g.N, Stages: 1, Modes: []string{tensorcore.Dense.String()},
			Precisions: []string{g.Precision.String()}}}
	prec, err := cfg.TensorCore.Get(g.Precision)
	if err != nil {
		return nil, err
	}
	// The SM's tensor cores are built for the plan's datapath; the GEMV
	// issues no MMA to them.
	if err := p.SetInstruction(prec, g); err != nil {
		return nil, err
	}
	p.TilesM, p.TilesN = CeilDiv(g.M, gemvRows), 1
	p.PaddedK = g.K
	p.KSteps = CeilDiv(g.K, bk)
	p.LastKSteps, p.splitSteps = p.KSteps, p.KSteps
	p.CTAs = p.TilesM * g.Batch
	p.Warps, p.Swizzle = gemvWarps, 1
	p.AStageB = gemvRows * bk * e
	p.BStageB = g.N * bk * e
	p.regsPerThr = (buildGEMVProgram(p, 0).Regs + 7) / 8 * 8
	if err := p.fit(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// gemvRuns says why the GEMV cannot run g (nil: it can).
func gemvRuns(cfg *configs.Config, g Shape) error {
	e := g.Precision.ElementBytes()
	switch {
	case g.Sparse:
		return fmt.Errorf("%s: a dense kernel (cuSPARSELt and CUTLASS ship no sparse GEMV); "+
			"the sparse GEMM runs its library's tiles", GEMVName)
	case g.N > GEMVMaxN:
		return fmt.Errorf("%s: runs N <= %d columns (decode batches), this GEMM has N = %d",
			GEMVName, GEMVMaxN, g.N)
	case g.Precision != tensorcore.FP16 && g.Precision != tensorcore.BF16 && g.Precision != tensorcore.TF32:
		return fmt.Errorf("%s: runs fp16, bf16 and tf32 (FP32 storage), not %s", GEMVName, g.Precision)
	case g.K%(gemvVec/e) != 0:
		return fmt.Errorf("%s: K must be a multiple of %d (16-byte vectors of %s), K is %d",
			GEMVName, gemvVec/e, g.Precision, g.K)
	case cfg.Kernel.Beta != 0:
		return fmt.Errorf("%s: reads no C (alpha only), kernel.beta is %g", GEMVName, cfg.Kernel.Beta)
	case !g.Layout.KMajorA() || !g.Layout.KMajorB():
		return fmt.Errorf("%s: runs the tn layout (weights and tokens K-major), not %s",
			GEMVName, g.Layout)
	}
	return nil
}

// FMAInterval is the cycles of a sub-partition's FP32 pipe per warp
// FFMA, FADD or FMUL: 32 lanes over sm.fp32_lanes (the SM issues them at
// it, the pre-model counts them at it).
func FMAInterval(cfg *configs.Config) int {
	return max(1, 32/max(1, cfg.SM.FP32Lanes))
}

// FMAPerKStep is the FP32-pipe instructions of one CTA's k-step of a
// GEMV plan, over its warps (0 for a tile plan, whose math is the tensor
// core's).
func (p *Plan) FMAPerKStep() int {
	if p.Schedule != GEMV {
		return 0
	}
	return p.Warps * isa.Counts(p.Program(0).Body)[isa.OpFMA]
}

// FMAPerCTA is the FP32-pipe instructions one CTA of a GEMV plan issues,
// over its warps: each warp's prologue and epilogue once and its body
// once per k-step (0 for a tile plan).
func (p *Plan) FMAPerCTA() int {
	if p.Schedule != GEMV {
		return 0
	}
	n := 0
	for w := range p.Warps {
		prog := p.Program(w)
		n += isa.Counts(prog.Prologue)[isa.OpFMA] + p.KSteps*isa.Counts(prog.Body)[isa.OpFMA] +
			isa.Counts(prog.Epilogue)[isa.OpFMA]
	}
	return n
}

// gemvSmem is the GEMV CTA's shared memory: the warps' reduced sums
// (shmem[TILE_M x TILE_N x warps] floats; cub's shuffle-based
// WarpReduce keeps no temporary storage of its own).
func (p *Plan) gemvSmem() int { return p.Shape.N * gemvRows * gemvWarps * 4 }

// OutputTile is the CTA's tile of D: what a GEMV's threads store (its 2
// rows by N columns, contiguous in the row-major D).
func (c *CTA) OutputTile() memory.Region { return c.outputRegion(BaseD, c.Plan.OutBytes) }
