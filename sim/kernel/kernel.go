package kernel

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/memory/smem"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/tensorcore/unit"
)

// Shape is one GEMM to run: D[M x N] = A[M x K] x B[K x N], Batch
// times, in one mode.
type Shape struct {
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
	// Layout is the operands' global layout (zero: tn).
	Layout Layout
}

// KernelMode is the family of library kernels that runs the GEMM, dense
// or sparse: a dual-side GEMM runs the sparse kernels, and its datapath
// (Plan.datapath, what its MMA requests ask the tensor core for) is
// tensorcore.DualSide.
func (g Shape) KernelMode() tensorcore.Mode {
	if g.Sparse {
		return tensorcore.Sparse
	}
	return tensorcore.Dense
}

// Schedule is how a kernel divides its GEMM among CTAs.
type Schedule int

const (
	// DataParallel: one CTA per output tile, each over all of K.
	DataParallel Schedule = iota
	// ParallelSplitK: SplitK CTAs per tile, each over a share of K,
	// writing partials that a separate reduction pass adds
	// (CUTLASS kernel::GemmSplitKParallel).
	ParallelSplitK
	// SerialSplitK: SplitK CTAs per tile that add their shares in turn
	// through a semaphore in global memory, each adding to the D its
	// predecessor wrote (CUTLASS GemmUniversal, kSplitKSerial).
	SerialSplitK
	// StreamK: persistent CTAs with even shares of all MAC-loop
	// iterations, partial tiles fixed up through a workspace (CUTLASS
	// GemmUniversalStreamk and ThreadblockSwizzleStreamK; streamk.go).
	StreamK
	// GEMV: the CUDA-core GEMV of skinny dense GEMMs (N <= GEMVMaxN):
	// FFMA on the FP32 pipe, no tensor core, no shared-memory staging of
	// the operands (gemv.go).
	GEMV
)

// String is the schedule as records print it.
func (s Schedule) String() string {
	switch s {
	case DataParallel:
		return "data_parallel"
	case ParallelSplitK:
		return "split_k_parallel"
	case SerialSplitK:
		return "split_k_serial"
	case StreamK:
		return "stream_k"
	case GEMV:
		return "gemv"
	}
	return fmt.Sprintf("Schedule(%d)", int(s))
}

// Cuttable says whether the schedule's plans can be cut in K
// (WithKSteps) and extrapolated over waves: each CTA is one tile's K
// range with no wait on another CTA. Serial split-K and stream-K are
// neither (their CTAs wait on each other and stream-K's cross tiles).
func (s Schedule) Cuttable() bool { return s == DataParallel || s == ParallelSplitK }

// WaveExtrapolable says whether the schedule's kernels can be
// extrapolated over waves: every CTA does the same work with no wait on
// another CTA. The cuttable schedules are, and so is the GEMV, whose
// CTAs each run all of K for their rows (it is not cut in K: its CTAs
// pass no k-step barrier and have a few dozen k-steps at most).
func (s Schedule) WaveExtrapolable() bool { return s.Cuttable() || s == GEMV }

// suffix is the schedule's kernel-name suffix, with its split factor.
func (s Schedule) suffix(splitK int) string {
	switch s {
	case ParallelSplitK:
		return fmt.Sprintf("%s%d", configs.SuffixSplitK, splitK)
	case SerialSplitK:
		return fmt.Sprintf("%s%d", configs.SuffixSerialK, splitK)
	case StreamK:
		return configs.SuffixStreamK
	}
	return ""
}

// ScheduleOf is the schedule a parsed kernel name asks for.
func ScheduleOf(k configs.KernelName) Schedule {
	switch k.Suffix {
	case configs.SuffixSplitK:
		if k.N > 1 {
			return ParallelSplitK
		}
	case configs.SuffixSerialK:
		if k.N > 1 {
			return SerialSplitK
		}
	case configs.SuffixStreamK:
		return StreamK
	}
	return DataParallel
}

// Plan is a GEMM mapped onto one tile configuration: everything the
// SM needs to run its CTAs.
type Plan struct {
	// KSampled: a sample of K extrapolation (withKSteps), not the plan
	// itself.
	KSampled bool
	// RetimeProbe: a K sample that probes a clock for the power cap's
	// re-timing (sim/selection's retime.go), wave-extrapolated from its
	// tracked waves and its last wherever it has that many.
	RetimeProbe bool

	Shape    Shape
	Tile     configs.TileConfig
	SplitK   int
	Schedule Schedule // what runs: set from SplitK by New

	Inst tensorcore.Shape // MMA instruction shape
	// Pattern is the N:M the MMAs run (the datapath's); Format the
	// operand's own pattern: the same but for V:N:M, whose kernel gathers
	// 4 of every M columns and runs 2:4 on them (gather.go).
	Pattern    tensorcore.Pattern
	Format     tensorcore.Pattern
	Datapath   tensorcore.Datapath // the tensor-core datapath the MMAs run on
	ElemBytes  int
	OutBytes   int
	TilesM     int
	TilesN     int
	KSteps     int // k-steps of a CTA of every split but the last
	LastKSteps int // k-steps of a CTA of the last split (its share and the rest)
	splitSteps int // k-steps per split but the last, of the whole plan (a K sample's CTAs start where the plan's do)
	PaddedK    int // K rounded up to the sparse kernel's granularity
	CTAs       int
	Warps      int
	Occupancy  int // CTAs per SM
	Limit      string
	Swizzle    int
	AStageB    int // bytes of A values per stage
	MetaStageB int // bytes of A metadata per stage
	BStageB    int // bytes of B per stage
	// Per warp per k-step:
	Groups      int // k-groups (instruction K slices) per k-step
	MMAPerGroup int // MMAs per k-group
	fragBytes   int // ldmatrix bytes per k-step (A values + B)
	metaFragB   int // metadata bytes read from shared memory per k-step
	regsPerThr  int
	beta        float64        // epilogue reads C when not 0
	Programs    []*isa.Program // per warp, built on first use
	// variants are the warps' programs for other epilogues (serial
	// split-K, stream-K), built on first use; streamK is the stream-K
	// decomposition (nil for the other schedules).
	variants map[progKey]*isa.Program
	streamK  *StreamKMap
	// Shared-memory layouts (CUTLASS's sm80 swizzles) and the warp's
	// ldmatrix patterns over them, per k-step.
	layoutA, layoutB, layoutE smem.Layout
	LDSM, MetaLDSM            smem.Pattern
	LDSMA, LDSMB              smem.Pattern // per operand
	FillWaves                 int          // wavefronts of writing one stage's fills
	// GatherLDS is the V:N:M kernel's index read before each copy of B
	// (gather.go); maskSeed draws its synthetic column selection.
	GatherLDS smem.Pattern
	maskSeed  int
	// TransposeB: B is column-major and the V:N:M kernel runs on its
	// row-major copy, made by a launch of its own first (transpose.go);
	// Shape.Layout is then the copy's.
	TransposeB bool
}

// Program is warp w's instruction stream (the same for every CTA).
func (p *Plan) Program(w int) *isa.Program {
	if p.Programs == nil {
		p.Programs = make([]*isa.Program, p.Warps)
	}
	if p.Programs[w] == nil && p.Schedule == GEMV {
		p.Programs[w] = buildGEMVProgram(p, w)
	}
	if p.Programs[w] == nil {
		p.Programs[w] = buildProgram(p, w)
	}
	return p.Programs[w]
}

// accumulatorBytes is the size of one accumulator element (FP32 or INT32).
const AccumulatorBytes = 4

// New maps a GEMM onto a tile, data-parallel or (splitK > 1) parallel
// split-K; it fails when the tile cannot run it.
func New(cfg *configs.Config, g Shape, t configs.TileConfig, splitK int) (*Plan, error) {
	return NewAs(cfg, g, t, splitK, defaultSchedule(splitK))
}

// NewAs is New with the schedule named: serial split-K takes splitK > 1,
// stream-K splitK 1.
func NewAs(cfg *configs.Config, g Shape, t configs.TileConfig, splitK int, s Schedule) (*Plan, error) {
	p, err := planFit(cfg, g, t, splitK, s)
	if err != nil {
		return nil, err
	}
	p.smemPatterns(cfg.Memory)
	return p, nil
}

// defaultSchedule is the schedule of a split factor without a name:
// parallel split-K above 1.
func defaultSchedule(splitK int) Schedule {
	if splitK > 1 {
		return ParallelSplitK
	}
	return DataParallel
}

// planFit is NewAs without the shared-memory access patterns: all that
// decides whether the tile can run the GEMM.
func planFit(cfg *configs.Config, g Shape, t configs.TileConfig, splitK int, s Schedule) (*Plan, error) {
	switch {
	case (s == SerialSplitK || s == ParallelSplitK) && splitK < 2:
		return nil, fmt.Errorf("tile %s: %s needs a split factor above 1, got %d", t.Name(), s, splitK)
	case (s == StreamK || s == DataParallel) && splitK != 1:
		return nil, fmt.Errorf("tile %s: %s takes no split factor, got %d", t.Name(), s, splitK)
	}
	p := &Plan{Shape: g, Tile: t, SplitK: splitK, Schedule: s,
		ElemBytes: g.Precision.ElementBytes(),
		// D is stored in the input type (FP16/BF16, FP32 for TF32, INT8).
		OutBytes: g.Precision.ElementBytes(),
		beta:     cfg.Kernel.Beta, maskSeed: cfg.TensorCore.MaskSeed}
	prec, err := cfg.TensorCore.Get(g.Precision)
	if err != nil {
		return nil, err
	}
	if err := p.SetInstruction(prec, g); err != nil {
		return nil, err
	}
	if t.BK%p.Inst.K != 0 {
		return nil, fmt.Errorf("tile %s: bk %d is not a multiple of the "+
			"instruction K %d", t.Name(), t.BK, p.Inst.K)
	}
	if t.WarpM%p.Inst.M != 0 || t.WarpN%p.Inst.N != 0 {
		return nil, fmt.Errorf("tile %s: warp tile not a multiple of %s",
			t.Name(), p.Inst)
	}
	p.transposeForGather()
	if err := p.checkGather(); err != nil {
		return nil, err
	}
	if err := p.grid(cfg); err != nil {
		return nil, err
	}
	p.stageBytes()
	p.warpWork()
	if err := p.fit(cfg); err != nil {
		return nil, err
	}
	if p.Schedule == StreamK {
		p.planStreamK(cfg.GPU.SMCount)
	}
	return p, nil
}

// SetInstruction sets the plan's MMA instruction (shape and, for a sparse
// shape, its pattern) from the precision's config.
func (p *Plan) SetInstruction(prec *tensorcore.PrecisionConfig, g Shape) error {
	pat := g.Pattern
	if g.Sparse && pat == (tensorcore.Pattern{}) { // not set: the config's
		if pat = prec.Pattern(); pat == (tensorcore.Pattern{}) {
			return fmt.Errorf("tensorcore.%s.sparse_pattern: bad sparsity pattern %s", g.Precision, quote.Q(prec.SparsePattern))
		}
	}
	dp, err := tensorcore.Derive(prec, g.Precision, p.datapath(), pat, g.Products)
	if err != nil {
		return err
	}
	p.Datapath, p.Inst, p.Pattern, p.Format = dp, dp.Shape, dp.Pattern, dp.Pattern
	if g.Sparse {
		p.Format = pat
	}
	return nil
}

// datapath is the tensor-core datapath of the plan's MMAs: Shape.KernelMode,
// or tensorcore.DualSide for a dual-side GEMM.
func (p *Plan) datapath() tensorcore.Mode {
	switch {
	case p.Shape.Dual:
		return tensorcore.DualSide
	case p.Shape.Sparse:
		return tensorcore.Sparse
	}
	return tensorcore.Dense
}

// MMARequest is a run of count MMAs of the plan, for its tensor cores.
func (p *Plan) MMARequest(count int) unit.Request {
	return unit.Request{Mode: p.datapath(), Precision: p.Shape.Precision,
		Pattern: p.Pattern, Products: p.Shape.Products, Count: count}
}

// metaBytes is the metadata of rows x keptCols kept values (bits rounded
// up to bytes).
func (p *Plan) metaBytes(rows, keptCols int) int {
	return (rows*p.Pattern.MetadataBitsFor(keptCols) + 7) / 8
}

// CeilDiv is a/b rounded up, for positive a and b.
func CeilDiv(a, b int) int { return (a + b - 1) / b }

// grid sizes the launch: tiles, split-K ranges and k-steps. A sparse
// kernel needs K in whole tiles (libraries pad A and B with zeros along
// K); a dense one predicates the last partial k-step.
//
// Split-K partitions K as CUTLASS's parallel split-K kernel
// (kernel::GemmSplitKParallel) does: every split but the last gets
// floor(full k-tiles / splits) k-steps and the last takes the rest,
// including a partial k-tile. Every split then has at least one k-step
// and K need not divide evenly.
func (p *Plan) grid(cfg *configs.Config) error {
	t, g := p.Tile, p.Shape
	p.TilesM = CeilDiv(g.M, t.BM)
	p.TilesN = CeilDiv(g.N, t.BN)
	p.PaddedK = g.K
	if g.Sparse { // V:N:M: the gathered columns' K
		p.PaddedK = CeilDiv(p.Format.Gathered(g.K), t.BK) * t.BK
	}
	tiles := CeilDiv(p.PaddedK, t.BK)
	p.KSteps = tiles
	if p.SplitK > 1 {
		p.KSteps = p.PaddedK / t.BK / p.SplitK
	}
	if p.KSteps < 1 {
		return fmt.Errorf("tile %s: split-K %d needs K >= %d, K is %d",
			t.Name(), p.SplitK, p.SplitK*t.BK, g.K)
	}
	p.LastKSteps = tiles - (p.SplitK-1)*p.KSteps
	p.splitSteps = p.KSteps
	p.CTAs = p.TilesM * p.TilesN * p.SplitK * g.Batch
	p.Warps = t.Warps()
	p.Swizzle = swizzleWidth(p.TilesN)
	return nil
}

// stepsOf is the k-steps a CTA of split runs.
func (p *Plan) stepsOf(split int) int {
	if split == p.SplitK-1 {
		return p.LastKSteps
	}
	return p.KSteps
}

// TotalKSteps is the k-steps of all the kernel's CTAs (every schedule
// covers each tile's K once).
func (p *Plan) TotalKSteps() int {
	if p.Schedule == StreamK {
		return p.TilesM * p.TilesN * p.Shape.Batch * p.streamK.ItersPerTile
	}
	perTile := (p.SplitK-1)*p.KSteps + p.LastKSteps
	return p.TilesM * p.TilesN * p.Shape.Batch * perTile
}

// WithKSteps is the plan cut to k k-steps per CTA (the last split keeps
// its extra k-steps), for samples that are shorter in K.
func (p *Plan) WithKSteps(k int) *Plan {
	if !p.Schedule.Cuttable() {
		panic("kernel: a " + p.Schedule.String() + " plan is not cut in K")
	}
	cut := *p
	cut.LastKSteps = k + p.LastKSteps - p.KSteps
	cut.KSteps = k
	cut.KSampled = true
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
func (p *Plan) stageBytes() {
	t := p.Tile
	keptK := p.Pattern.Kept(t.BK)
	p.AStageB = t.BM * keptK * p.ElemBytes
	if p.Shape.Sparse {
		p.MetaStageB = p.metaBytes(t.BM, keptK)
	}
	p.BStageB = t.BN * t.BK * p.ElemBytes
	if p.gathers() { // the stage's column indices, after A's metadata
		p.MetaStageB += p.colIdxBytes(t.BK)
	}
	if p.Shape.Dual { // B compressed too, its metadata after A's
		p.BStageB = t.BN * keptK * p.ElemBytes
		p.MetaStageB += p.metaBytes(t.BN, keptK)
	}
}

// warpWork sizes one warp's work per k-step: fragments loaded with
// ldmatrix (A values, B, and the metadata words) and MMAs issued.
func (p *Plan) warpWork() {
	t := p.Tile
	p.Groups = t.BK / p.Inst.K
	p.MMAPerGroup = (t.WarpM / p.Inst.M) * (t.WarpN / p.Inst.N)
	keptInstK := p.Pattern.Kept(p.Inst.K)
	aFrag := t.WarpM * keptInstK * p.ElemBytes
	bFrag := t.WarpN * p.Inst.K * p.ElemBytes
	if p.Shape.Dual {
		bFrag = t.WarpN * keptInstK * p.ElemBytes
	}
	p.fragBytes = p.Groups * (aFrag + bFrag)
	if p.Shape.Sparse {
		p.metaFragB = p.Groups * p.metaBytes(t.WarpM, keptInstK)
	}
	if p.Shape.Dual {
		p.metaFragB += p.Groups * p.metaBytes(t.WarpN, keptInstK)
	}
	acc := t.WarpM * t.WarpN / 32
	frag := 2 * (aFrag + bFrag) / 4 / 32
	p.regsPerThr = min(255, acc+frag+40)
}

// smemPatterns lays the stage's tiles out as CUTLASS's sm80 kernels do
// for the shape's layout (default_mma_core_sm80.h and its sparse twin: a
// K-major operand crosswise, an M- or N-major one congruous; the metadata
// column-major) and derives the wavefronts of one warp's fragment loads
// per k-step from them.
func (p *Plan) smemPatterns(mc memory.Config) {
	key := p.patternKey(mc)
	if v, ok := patternMemo.Load(key); ok {
		p.setPatterns(v.(smemPatterns))
	} else {
		p.computePatterns(mc)
		if patternMemoSize.Add(1) <= patternMemoMax {
			patternMemo.Store(key, p.patterns())
		}
	}
	if p.gathers() {
		p.GatherLDS = p.gatherIndexPattern(mc.SharedMemory)
	}
}

// computePatterns is smemPatterns without the memo (patternmemo.go).
func (p *Plan) computePatterns(mc memory.Config) {
	p.layoutA, p.layoutB, p.layoutE = p.operandLayouts()
	p.fragmentPatterns(mc.SharedMemory)
	p.FillWaves = p.stageFillWaves(mc)
}

// operandLayouts are the shared-memory layouts of A, B and the metadata.
func (p *Plan) operandLayouts() (a, b, e smem.Layout) {
	t, lay := p.Tile, p.Shape.Layout
	bits := 8 * p.ElemBytes
	a = smem.OperandLayout(bits, p.keptBK())
	if !lay.KMajorA() {
		a = smem.CongruousLayout(bits, t.BM)
	}
	b = smem.OperandLayout(bits, t.BK)
	if !lay.KMajorB() {
		b = smem.CongruousLayout(bits, t.BN)
	}
	e = smem.Layout{Kind: smem.ColumnMajor, ElemBits: 16,
		Contig: max(1, p.MetaStageB/2)}
	return a, b, e
}

// Waves is how many waves the plan's CTAs take on sms SMs at its
// occupancy.
func (p *Plan) Waves(sms int) int { return CeilDiv(p.CTAs, sms*p.Occupancy) }

// keptBK is the K extent of A's stage tile: BK, or its kept part when
// sparse.
func (p *Plan) keptBK() int { return p.Pattern.Kept(p.Tile.BK) }

// fragmentPatterns sets the warp's fragment-load patterns over the
// stage's layouts: a K-major operand's 8x8 matrices are 8 of its rows at
// one 16-B vector of K (ldmatrix), an M- or N-major one's are 8 K rows at
// one 16-B vector of M or N (ldmatrix.trans, FragTrans).
func (p *Plan) fragmentPatterns(cfg memory.SharedMemoryConfig) {
	t, lay := p.Tile, p.Shape.Layout
	a := smem.FragmentPattern("ldsm A", p.layoutA, t.WarpM, p.keptBK(), cfg)
	switch {
	case p.FragScalar(isa.OperandA):
		a = smem.ScalarFragmentPattern("lds.32 A", p.layoutA, p.keptBK(), t.WarpM, cfg)
	case !lay.KMajorA():
		a = smem.FragmentPattern("ldsm.trans A", p.layoutA, p.keptBK(), t.WarpM, cfg)
	}
	b := smem.FragmentPattern("ldsm B", p.layoutB, t.WarpN, t.BK, cfg)
	switch {
	case p.FragScalar(isa.OperandB):
		b = smem.ScalarFragmentPattern("lds.32 B", p.layoutB, t.BK, t.WarpN, cfg)
	case !lay.KMajorB():
		b = smem.FragmentPattern("ldsm.trans B", p.layoutB, t.BK, t.WarpN, cfg)
	}
	p.LDSMA, p.LDSMB = a, b
	p.LDSM = smem.Pattern{Name: "ldsm.x4 A+B",
		BytesPerInstr: a.BytesPerInstr + b.BytesPerInstr,
		Wavefronts:    a.Wavefronts + b.Wavefronts}
	if p.metaFragB > 0 {
		p.MetaLDSM = smem.PatternFromAddrs("ldsm E",
			p.layoutE.VectorAddrs(0, 0, p.metaFragB), 16, cfg)
	}
}

// FragTrans reports whether op's fragments are transposed on the way to
// the registers: its tile in shared memory runs along M or N, and the MMA
// wants K in each thread's registers (ldmatrix.trans; LDS.32 for 32-bit
// elements, FragScalar).
func (p *Plan) FragTrans(op isa.Operand) bool {
	switch op {
	case isa.OperandA:
		return !p.Shape.Layout.KMajorA()
	case isa.OperandB:
		return !p.Shape.Layout.KMajorB()
	}
	return false
}

// FragScalar reports whether op's fragments load with LDS.32, one
// element per thread, rather than ldmatrix: a 32-bit (TF32) operand whose
// tile runs along M or N, which ldmatrix.trans cannot transpose.
func (p *Plan) FragScalar(op isa.Operand) bool {
	return p.ElemBytes == 4 && p.FragTrans(op)
}

// FragInstrBytes is what one of op's fragment-load instructions moves for
// the warp: 512 B for an LDSM.x4, 128 B for an LDS.32.
func (p *Plan) FragInstrBytes(op isa.Operand) int {
	if p.FragScalar(op) {
		return 32 * 4
	}
	return ChunkBytes
}

// stageFillWaves is the bank-array wavefronts of writing one full stage
// as its lines arrive in crossbar packets (rows line-aligned, as the
// operands of a GEMM whose K, M and N are multiples of 64 elements are).
func (p *Plan) stageFillWaves(mc memory.Config) int {
	f := memory.NewFiller(mc)
	t := p.Tile
	const pitch = 1 << 16
	tile := func(outer, k int, kMajor bool) memory.Region {
		if kMajor {
			return memory.Region{Rows: outer, RowBytes: k * p.ElemBytes, Pitch: pitch}
		}
		return memory.Region{Rows: k, RowBytes: outer * p.ElemBytes, Pitch: pitch}
	}
	lay := p.Shape.Layout
	waves := f.Plan(tile(t.BM, p.keptBK(), lay.KMajorA()), p.layoutA).Wavefronts
	waves += f.Plan(tile(t.BN, t.BK, lay.KMajorB()), p.layoutB).Wavefronts
	if p.MetaStageB > 0 {
		waves += f.Plan(memory.Region{Rows: 1, RowBytes: p.MetaStageB,
			Pitch: pitch}, p.layoutE).Wavefronts
	}
	return waves
}

// SmemLayout is the shared-memory layout of a stage part.
func (p *Plan) SmemLayout(c memory.Class) smem.Layout {
	switch c {
	case memory.AValues:
		return p.layoutA
	case memory.AMeta:
		return p.layoutE
	}
	return p.layoutB
}

// smemPerCTA is the shared memory of one CTA: its cp.async stages.
func (p *Plan) smemPerCTA() int {
	if p.Schedule == GEMV {
		return p.gemvSmem()
	}
	return p.Tile.Stages * (p.AStageB + p.MetaStageB + p.BStageB)
}

// fit computes occupancy from the SM's limits and fails when not even one
// CTA fits.
func (p *Plan) fit(cfg *configs.Config) error {
	sm := cfg.SM
	threads := p.Warps * 32
	smemKB := cfg.Memory.SharedMemory.CarveoutKB
	limits := []struct {
		name string
		n    int
	}{
		{"cta slots", sm.MaxCTAs},
		{"threads", sm.MaxThreads / threads},
		{"warps", sm.MaxWarps / p.Warps},
		{"registers", sm.Registers / (p.regsPerThr * threads)},
		{"shared memory", smemKB * 1024 / max(1, p.smemPerCTA())},
	}
	p.Occupancy = 1 << 30
	for _, l := range limits {
		if l.n < p.Occupancy {
			p.Occupancy, p.Limit = l.n, l.name
		}
	}
	if p.Occupancy < 1 {
		if p.Limit == "shared memory" {
			return fmt.Errorf("tile %s: one CTA needs %d bytes (%d KB) of shared memory "+
				"(%d stages), more than the %d-byte (%d KB) limit, shared_memory.carveout_kb",
				p.Tile.Name(), p.smemPerCTA(), CeilDiv(p.smemPerCTA(), 1024),
				p.Tile.Stages, smemKB*1024, smemKB)
		}
		return fmt.Errorf("tile %s: one CTA does not fit an SM's %s", p.Tile.Name(), p.Limit)
	}
	return nil
}

// Name is the kernel identifier reported in results.
func (p *Plan) Name() string {
	if p.Schedule == GEMV {
		return GEMVName
	}
	return p.Tile.Name() + p.Schedule.suffix(p.SplitK)
}

// ctaCoord maps a CTA's launch index to its output tile and K split, in
// CUTLASS's rasterization order: bands of p.swizzle tile columns (N),
// walked row by row (M), so that co-resident CTAs share A and B tiles and
// a band's B columns stay in L2 while it walks all of M. CUTLASS launches
// no-op CTAs where the last band is narrower; they are skipped here.
func (p *Plan) ctaCoord(i int) (batch, tm, tn, split int) {
	perGEMM := p.TilesM * p.TilesN
	split = i / (perGEMM * p.Shape.Batch)
	rest := i % (perGEMM * p.Shape.Batch)
	batch = rest / perGEMM
	t := rest % perGEMM
	band := t / (p.Swizzle * p.TilesM)
	inBand := t % (p.Swizzle * p.TilesM)
	cols := min(p.Swizzle, p.TilesN-band*p.Swizzle)
	tn = band*p.Swizzle + inBand%cols
	tm = inBand / cols
	return batch, tm, tn, split
}

// Describe names a simulation of the plan: GEMM, mode and kernel.
func (p *Plan) Describe() string {
	return fmt.Sprintf("%dx%dx%d", p.Shape.M, p.Shape.N, p.Shape.K) +
		fmt.Sprintf("x%d %s %s %s ctas=%d ksteps=%d", p.Shape.Batch,
			p.Shape.Precision, p.Shape.KernelMode(), p.Name(), p.CTAs, p.LastKSteps)
}
