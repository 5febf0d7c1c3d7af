package configs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/stcsim/stcsim/area"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/check"
	"github.com/stcsim/stcsim/memory/memcfg"
	"github.com/stcsim/stcsim/tensorcore"
)

// Config is one GPU: every parameter the model uses. Sections are typed by
// the package that models them (tensor core, memory); the SM, kernel
// library and simulation controls are typed here.
type Config struct {
	// Base names a config this one overlays (a built-in name or a path
	// relative to this file); it is resolved when loading.
	Base        string            `yaml:"base,omitempty"`
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	GPU         GPUConfig         `yaml:"gpu"`
	SM          SMConfig          `yaml:"sm"`
	TensorCore  tensorcore.Config `yaml:"tensorcore"`
	Memory      memcfg.Config     `yaml:",inline"`
	Kernel      KernelConfig      `yaml:"kernel"`
	Sim         SimConfig         `yaml:"sim"`
	// Power is the board's power limit, V/f table and event energies.
	Power energy.Config `yaml:"power"`
	// Area is the silicon-area model's unit figures and layout
	// (docs/area.md).
	Area area.Config `yaml:"area"`
}

// AreaInputs are the parts of the config the area model lays out.
func (c *Config) AreaInputs() area.Inputs {
	s := c.Memory.SharedMemory
	return area.Inputs{TC: c.TensorCore, SubPartitions: c.SM.SubPartitions,
		Registers: c.SM.Registers, RFBytesPerClk: c.SM.RegisterFileBytesPerClk,
		RFBanks: c.SM.RegisterFileBanks, L1KB: c.Memory.L1.TotalKB,
		SmemBanks: s.Banks, SmemBankBytes: s.BankBytes, SmemPorts: s.Ports,
		SMs: c.GPU.SMCount}
}

// AreaModel is the config's area breakdown.
func (c *Config) AreaModel() (area.Breakdown, error) {
	return area.Model(c.Area, c.AreaInputs())
}

// derivePaths sets the energy model's per-MMA path energies from the
// tensor-core description as the area section lays it out.
func (c *Config) derivePaths() error {
	b, err := c.AreaModel()
	if err == nil {
		c.Power.Paths, err = area.MMAPaths(c.Area, &c.TensorCore, b)
	}
	return err
}

// GPUConfig holds chip-level parameters.
type GPUConfig struct {
	ClockMHz int `yaml:"clock_mhz"`
	SMCount  int `yaml:"sm_count"`
	// ClockPolicy is "locked" (every kernel at clock_mhz) or
	// "power_capped" (each kernel at the highest clock of the V/f table,
	// up to clock_mhz, that keeps it within power.limit_w).
	ClockPolicy string `yaml:"clock_policy"`
}

// SMConfig holds the streaming multiprocessor's parameters.
type SMConfig struct {
	SubPartitions int `yaml:"sub_partitions"`
	// WarpSchedulers is the number of warp schedulers per sub-partition.
	WarpSchedulers int `yaml:"warp_schedulers"`
	// IssuePerClk is instructions issued per scheduler per cycle.
	IssuePerClk int `yaml:"issue_per_clk"`
	// SchedulerPolicy orders a scheduler's ready warps: "gto" (greedy
	// then oldest) or "lrr" (loose round-robin).
	SchedulerPolicy string `yaml:"scheduler_policy"`
	MaxWarps        int    `yaml:"max_warps"`
	MaxThreads      int    `yaml:"max_threads"`
	MaxCTAs         int    `yaml:"max_ctas"`
	// Registers is the number of 32-bit registers per SM.
	Registers int `yaml:"registers"`
	// RegisterFileBytesPerClk is the operand-collector read bandwidth of one
	// sub-partition's register file, all banks together.
	RegisterFileBytesPerClk int `yaml:"register_file_bytes_per_clk"`
	// RegisterFileBanks is the banks of one sub-partition's register file:
	// register r is in bank r mod banks, and each bank moves
	// RegisterFileBytesPerClk / banks bytes per cycle, so two operands in
	// one bank take turns (a bank conflict).
	RegisterFileBanks int `yaml:"register_file_banks"`
	// BarrierLatency is the cycles from the last warp arriving at a CTA
	// barrier to the warps resuming.
	BarrierLatency int `yaml:"barrier_latency"`
	// CTALaunchLatency is the cycles from a CTA slot freeing to the next
	// CTA's first instruction.
	CTALaunchLatency int `yaml:"cta_launch_latency"`
	// CTADispatchInterval is the cycles between two CTAs leaving the
	// GPU's CTA dispatcher (GPU-wide; 0: no GPU-wide limit). An SM
	// accepts at most one CTA per cycle either way.
	CTADispatchInterval int `yaml:"cta_dispatch_interval"`
	// KernelLaunchLatency is the cycles added once per kernel launch.
	KernelLaunchLatency int `yaml:"kernel_launch_latency"`
	// FP32Lanes is the FP32 (FFMA) lanes of one sub-partition: a warp's
	// FFMA, FADD or FMUL takes 32 / FP32Lanes cycles of its FP32 pipe
	// (the CUDA-core GEMV's inner product runs there).
	FP32Lanes int `yaml:"fp32_lanes"`
}

// TileConfig is one kernel of the library: a CUTLASS-style threadblock
// tile, its warp tile and its cp.async pipeline depth.
type TileConfig struct {
	BM         int      `yaml:"bm"`
	BN         int      `yaml:"bn"`
	BK         int      `yaml:"bk"` // logical K per k-step (before compression)
	WarpM      int      `yaml:"warp_m"`
	WarpN      int      `yaml:"warp_n"`
	Stages     int      `yaml:"stages"`
	Modes      []string `yaml:"modes"`      // dense, sparse
	Precisions []string `yaml:"precisions"` // fp16, bf16, tf32, int8
	// MaxN offers the tile only to GEMMs whose N is at most this (0: to
	// every GEMM): a small-N tile is the library's kernel for skinny
	// problems, which its heuristic does not pick for wide ones.
	MaxN int `yaml:"max_n"`
}

// Name is the tile's identifier, as reported in results and accepted by
// kernel.force: BMxBNxBK_WMxWN_sS.
func (t TileConfig) Name() string {
	return fmt.Sprintf("%dx%dx%d_%dx%d_s%d", t.BM, t.BN, t.BK, t.WarpM,
		t.WarpN, t.Stages)
}

// Warps is the number of warps of one CTA.
func (t TileConfig) Warps() int { return (t.BM / t.WarpM) * (t.BN / t.WarpN) }

// OffersN says whether the tile is offered to a GEMM of N columns
// (MaxN).
func (t TileConfig) OffersN(n int) bool {
	return t.MaxN == 0 || n <= t.MaxN
}

// Supports says whether the tile is offered for a mode and precision.
func (t TileConfig) Supports(mode tensorcore.Mode, precision tensorcore.Precision) bool {
	return contains(t.Modes, mode.String()) &&
		contains(t.Precisions, precision.String())
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// KernelConfig is the kernel library and its selection rule.
type KernelConfig struct {
	// Force pins the kernel of both modes by the name results print:
	// TILE pins the tile (the heuristic still picks split-K), and
	// TILE_splitkN pins the split-K factor too ("" lets the heuristic
	// choose). ForceDense and ForceSparse pin one mode's kernel and win
	// over Force for that mode.
	Force       string `yaml:"force"`
	ForceDense  string `yaml:"force_dense"`
	ForceSparse string `yaml:"force_sparse" mode:"sparse"`
	// SplitK lists the split-K factors the heuristic may try.
	SplitK []int `yaml:"split_k"`
	// SerialSplitK: the heuristic also tries each split factor as serial
	// split-K (TILE_serialkN: the splits add into D in turn through a
	// semaphore, no reduction pass) beside the parallel one.
	SerialSplitK bool `yaml:"serial_split_k"`
	// StreamK: the heuristic also tries each tile as stream-K
	// (TILE_streamk, CUTLASS 2.x's GemmUniversalStreamk decomposition).
	StreamK bool `yaml:"stream_k"`
	// Beta is the GEMM's beta: 0 means C is not read in the epilogue.
	Beta float64 `yaml:"beta"`
	// L2Start is the L2's state when the kernel starts: "cold" (empty,
	// a single call) or "repeat" (as an identical call just before left
	// it: a benchmark loop's calls back to back).
	L2Start string `yaml:"l2_start"`
	// SimulatedCandidates is how many of the pre-model's best candidates
	// are simulated in full to pick the kernel.
	SimulatedCandidates int          `yaml:"simulated_candidates"`
	Candidates          []TileConfig `yaml:"candidates"`
}

// SimConfig holds controls of the simulation itself.
type SimConfig struct {
	Seed uint64 `yaml:"seed"`
	// MemoryGranularity is "fast" (tile-granular transfers through
	// bandwidth-and-latency models) or "detailed" (every line request
	// through Akita caches and DRAM).
	MemoryGranularity string `yaml:"memory_granularity"`
	// ExtrapolateWaves simulates the first waves of a kernel and
	// extrapolates the steady state for the rest.
	ExtrapolateWaves bool `yaml:"extrapolate_waves"`
	// ExtrapolateKSteps simulates a kernel of more than 192 k-steps per
	// CTA at 48 and 96 and extends the record along the line through the
	// two (docs/sm.md).
	ExtrapolateKSteps bool `yaml:"extrapolate_ksteps"`
	// FastForward leaves out the middle of each wave's steady k-steps
	// and extends the run by the rate measured before (sim/fastforward.go).
	FastForward bool `yaml:"fast_forward"`
	// RetimeProbeKSteps, when > 0, re-times a power-capped kernel whose
	// CTAs run at least twice as many k-steps from a probe of this many
	// k-steps per CTA simulated at the locked and the capped clock, the
	// locked record scaled by the probe's change (docs/fast-paths.md);
	// 0 simulates the whole kernel again at each clock.
	RetimeProbeKSteps int `yaml:"retime_probe_ksteps"`
	// JitterRuns is the size of the selection ensemble: every candidate
	// and the chosen kernel run this many times, run 0 unperturbed and
	// the others with seeded CTA dispatch offsets and same-cycle tie
	// orders; the selection and the reported cycles use the mean.
	JitterRuns int `yaml:"jitter_runs"`
	// PruneTolerance is how close to the leading candidate's estimate,
	// as a fraction of it, a selection sample's lower bound must come for
	// the sample to be stopped: 0 stops it only once it provably loses;
	// t > 0 also once it could win by no more than t (docs/fast-paths.md).
	PruneTolerance float64 `yaml:"prune_tolerance"`
	// Fidelity is the tier that times every kernel: "instruction" (the
	// instruction-level SM) or "fast" (sim/fast's analytical tier, with
	// a per-kernel fallback to instruction where it refuses a plan).
	Fidelity string `yaml:"fidelity"`
}

// The states kernel.l2_start selects.
const (
	L2Cold   = "cold"
	L2Repeat = "repeat"
)

// L2Starts are the values kernel.l2_start takes.
var L2Starts = []string{L2Cold, L2Repeat}

// The tiers sim.fidelity selects.
const (
	FidelityInstruction = "instruction"
	FidelityFast        = "fast"
)

// Fidelities are the values sim.fidelity takes.
var Fidelities = []string{FidelityInstruction, FidelityFast}

// Validate checks the whole config; paths are full keys.
func (c *Config) Validate() check.List {
	var l check.List
	if c.Name == "" {
		l.Add("name", "must be set")
	}
	// Both reach terminals and file headers as they are: no control
	// characters (an ESC would drive the terminal), no line breaks.
	for _, f := range []struct{ key, v string }{{"name", c.Name}, {"description", c.Description}} {
		if i := strings.IndexFunc(f.v, unicode.IsControl); i >= 0 {
			l.Add(f.key, "holds the control character %s at byte %d: printable text only", Quote(f.v[i:i+1]), i)
		}
	}
	l.Positive("gpu.clock_mhz", c.GPU.ClockMHz)
	l.Positive("gpu.sm_count", c.GPU.SMCount)
	l = append(l, c.SM.validate().Prefix("sm")...)
	l = append(l, c.TensorCore.Validate().Prefix("tensorcore")...)
	l = append(l, c.Memory.Validate()...)
	l = append(l, c.Kernel.validate(c).Prefix("kernel")...)
	l.OneOf("sim.memory_granularity", c.Sim.MemoryGranularity, memcfg.Granularities()...)
	l.Range("sim.jitter_runs", c.Sim.JitterRuns, 1, 64)
	if c.Sim.RetimeProbeKSteps < 0 {
		l.Add("sim.retime_probe_ksteps", "must be >= 0 (got %d; 0 re-times the whole kernel)", c.Sim.RetimeProbeKSteps)
	}
	if c.Sim.PruneTolerance < 0 {
		l.Add("sim.prune_tolerance", "must be >= 0 (got %g)", c.Sim.PruneTolerance)
	}
	l.OneOf("sim.fidelity", c.Sim.Fidelity, Fidelities...)
	l = append(l, c.checkBounds()...)
	l.OneOf("gpu.clock_policy", c.GPU.ClockPolicy, energy.Policies...)
	l = append(l, c.Power.Validate().Prefix("power")...)
	l = append(l, c.Area.Validate().Prefix("area")...)
	return l.Sorted()
}

func (s SMConfig) validate() check.List {
	var l check.List
	l.Positive("sub_partitions", s.SubPartitions)
	l.Positive("warp_schedulers", s.WarpSchedulers)
	l.Positive("issue_per_clk", s.IssuePerClk)
	l.OneOf("scheduler_policy", s.SchedulerPolicy, "gto", "lrr")
	l.Positive("max_warps", s.MaxWarps)
	l.Positive("max_threads", s.MaxThreads)
	l.Positive("max_ctas", s.MaxCTAs)
	l.Positive("registers", s.Registers)
	l.Positive("register_file_bytes_per_clk", s.RegisterFileBytesPerClk)
	l.PowerOfTwo("register_file_banks", s.RegisterFileBanks)
	if b := s.RegisterFileBanks; b > 0 && s.RegisterFileBytesPerClk%b != 0 {
		l.AddWith("register_file_bytes_per_clk", []string{"register_file_banks"}, "%d is not a whole number of "+
			"bytes per bank over register_file_banks = %d",
			s.RegisterFileBytesPerClk, b)
	}
	l.NonNegative("barrier_latency", s.BarrierLatency)
	l.NonNegative("cta_launch_latency", s.CTALaunchLatency)
	l.NonNegative("cta_dispatch_interval", s.CTADispatchInterval)
	l.NonNegative("kernel_launch_latency", s.KernelLaunchLatency)
	l.PowerOfTwo("fp32_lanes", s.FP32Lanes)
	if s.MaxThreads != s.MaxWarps*32 && s.MaxWarps > 0 {
		l.AddWith("max_threads", []string{"max_warps"}, "inconsistent: max_warps %d x 32 = %d",
			s.MaxWarps, s.MaxWarps*32)
	}
	return l
}

func (k KernelConfig) validate(c *Config) check.List {
	var l check.List
	if len(k.Candidates) == 0 {
		l.Add("candidates", "must list at least one tile configuration")
	}
	for i, f := range k.SplitK {
		l.Range("split_k", f, 1, 64)
		// A repeat would change the config's hash and nothing else.
		if j := slices.Index(k.SplitK[:i], f); j >= 0 {
			l.Add("split_k", "factor %d listed twice (entries %d and %d)", f, j, i)
		}
	}
	if len(k.SplitK) == 0 {
		l.Add("split_k", "must list at least one factor (1 = no split-K)")
	}
	l.Range("simulated_candidates", k.SimulatedCandidates, 1, 64)
	if k.Beta != 0 && k.Beta != 1 {
		l.Add("beta", "must be 0 or 1 (got %g)", k.Beta)
	}
	l.OneOf("l2_start", k.L2Start, L2Starts...)
	if k.L2Start == L2Repeat && c.Sim.MemoryGranularity != "fast" {
		l.Add("l2_start", "%s needs sim.memory_granularity fast: the detailed hierarchy's caches cannot be preloaded", L2Repeat)
	}
	names := map[string]bool{}
	for i, t := range k.Candidates {
		p := fmt.Sprintf("candidates[%d]", i)
		l = append(l, t.validate(c).Prefix(p)...)
		names[t.Name()] = true
	}
	var all []string // in library order, each name once
	for _, t := range k.Candidates {
		if !slices.Contains(all, t.Name()) {
			all = append(all, t.Name())
		}
	}
	for _, f := range []struct{ key, v string }{{"force", k.Force},
		{"force_dense", k.ForceDense}, {"force_sparse", k.ForceSparse}} {
		if f.v == "" {
			continue
		}
		k, err := ParseKernel(f.v)
		switch {
		case err != nil:
			l.Add(f.key, "%v", err)
		case k.Tile == GEMVName && k.Suffix != "":
			l.Add(f.key, "%s: the GEMV %s takes no split-K or stream-K suffix", Quote(f.v), GEMVName)
		case k.Tile == GEMVName:
		case !names[k.Tile]:
			l.Add(f.key, "%s is not a candidate (have %s, and %s for N <= 8; add _splitkN "+
				"to pin split-K, _serialkN or _streamk)", Quote(k.Tile), strings.Join(all, ", "), GEMVName)
		case k.N > 64:
			l.Add(f.key, "split-K %d of %s must be in 1..64", k.N, Quote(f.v))
		case k.Suffix == SuffixSerialK && k.N < 2:
			l.Add(f.key, "%s: serial split-K needs N >= 2 splits", Quote(f.v))
		}
	}
	return l
}

// Forced is the kernel name pinned for mode: force_dense or
// force_sparse when set, else force ("" when none).
func (k KernelConfig) Forced(mode tensorcore.Mode) string {
	switch {
	case mode == tensorcore.Dense && k.ForceDense != "":
		return k.ForceDense
	case mode != tensorcore.Dense && k.ForceSparse != "":
		return k.ForceSparse
	}
	return k.Force
}

// Kernel-name suffixes, one per schedule that is not data-parallel
// (sim/kernel.Schedule names them in Plan.Name).
const (
	SuffixSplitK  = "_splitk"  // _splitkN: parallel split-K, N splits and a reduction pass
	SuffixSerialK = "_serialk" // _serialkN: serial split-K, N splits in turn on a semaphore
	SuffixStreamK = "_streamk" // _streamk: stream-K
)

// GEMVName is the CUDA-core GEMV's kernel name (sim/kernel/gemv.go): the
// library's one kernel that is not a tile of kernel.candidates, offered
// to dense GEMMs of N <= 8 and pinned by this name.
const GEMVName = "gemv_cudacore"

// KernelName is a kernel name as results print it, parsed: TILE,
// TILE_splitkN, TILE_serialkN or TILE_streamk.
type KernelName struct {
	Tile   string
	Suffix string // "" (the tile alone) or one of the Suffix constants
	N      int    // the splits of _splitkN and _serialkN; 0 otherwise
}

// ParseKernel parses a kernel name; a split suffix without a whole N >= 1
// after it, or anything after _streamk, is an error.
func ParseKernel(s string) (KernelName, error) {
	for _, suf := range []string{SuffixSplitK, SuffixSerialK} {
		i := strings.LastIndex(s, suf)
		if i < 0 {
			continue
		}
		n, err := strconv.Atoi(s[i+len(suf):])
		if err != nil || n < 1 {
			return KernelName{}, fmt.Errorf("%s: the split-K suffix must be "+
				"%sN with N >= 1", Quote(s), suf)
		}
		return KernelName{Tile: s[:i], Suffix: suf, N: n}, nil
	}
	if i := strings.LastIndex(s, SuffixStreamK); i >= 0 {
		if i+len(SuffixStreamK) != len(s) {
			return KernelName{}, fmt.Errorf("%s: the stream-K suffix is %s "+
				"with nothing after it", Quote(s), SuffixStreamK)
		}
		return KernelName{Tile: s[:i], Suffix: SuffixStreamK}, nil
	}
	return KernelName{Tile: s}, nil
}

// ParseKernelName splits a kernel name as results print it into the
// tile's name and the parallel split-K factor (0 when the name does not
// give one: a TILE, TILE_serialkN or TILE_streamk name; ParseKernel has
// the schedule).
func ParseKernelName(s string) (tile string, splitK int, err error) {
	k, err := ParseKernel(s)
	if err != nil {
		return "", 0, err
	}
	if k.Suffix != SuffixSplitK {
		return k.Tile, 0, nil
	}
	return k.Tile, k.N, nil
}

func (t TileConfig) validate(c *Config) check.List {
	var l check.List
	l.PowerOfTwo("bm", t.BM)
	l.PowerOfTwo("bn", t.BN)
	l.PowerOfTwo("bk", t.BK)
	l.PowerOfTwo("warp_m", t.WarpM)
	l.PowerOfTwo("warp_n", t.WarpN)
	l.Range("stages", t.Stages, 2, 16)
	l.Range("max_n", t.MaxN, 0, 1<<30)
	if len(l) > 0 {
		return l
	}
	if t.WarpM > t.BM || t.WarpN > t.BN {
		l.Add("warp_m", "warp tile %dx%d larger than threadblock tile %dx%d",
			t.WarpM, t.WarpN, t.BM, t.BN)
	}
	if t.Warps()*32 > c.SM.MaxThreads {
		l.AddWith("bm", []string{"/sm.max_threads"}, "%d warps exceed sm.max_threads", t.Warps())
	}
	if len(t.Modes) == 0 {
		l.Add("modes", "must list dense and/or sparse")
	}
	for _, m := range t.Modes {
		l.OneOf("modes", m, tensorcore.ModeNames()...)
	}
	if len(t.Precisions) == 0 {
		l.Add("precisions", "must list at least one precision")
	}
	for _, p := range t.Precisions {
		l.OneOf("precisions", p, tensorcore.PrecisionNames()...)
	}
	return l
}
