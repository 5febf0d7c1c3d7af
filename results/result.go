package results

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Version is the tool's version, written into every output.
const Version = "0.1.0"

// Report is the result of a run: the machine-readable output contract.
type Report struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Config  string `json:"config"`
	// Provenance is everything that produced the results.
	Provenance *Provenance   `json:"provenance"`
	Results    []LayerResult `json:"results"`
	Totals     []Total       `json:"totals"`
	// PowerCapped are the totals under gpu.clock_policy=power_capped when
	// the run's clock is locked and some kernel draws more than the
	// board's limit at it (the board would not sustain that clock);
	// absent otherwise.
	PowerCapped []ClockTotal `json:"power_capped_totals,omitempty"`
}

// ClockTotal is one workload in one mode under a clock policy: the sum
// over its layers and the range of clocks its kernels ran at.
type ClockTotal struct {
	Workload string          `json:"workload"`
	Mode     tensorcore.Mode `json:"mode"`
	// Policy is the gpu.clock_policy (power_capped) and LimitW its
	// power.limit_w.
	Policy      string  `json:"clock_policy"`
	LimitW      float64 `json:"limit_w"`
	TimeUS      float64 `json:"time_us"`
	Speedup     float64 `json:"speedup,omitempty"`
	MinClockMHz int     `json:"min_clock_mhz"`
	MaxClockMHz int     `json:"max_clock_mhz"`
}

// Provenance is what produced a report, enough to reproduce it: the
// config's sources in merge order with their hashes, every --set, the
// effective config's hash, the workloads with their options, the tool
// version and the command line.
type Provenance struct {
	Version string `json:"version"`
	// Command is the command line (os.Args) of the run; empty when the
	// report was made through the library.
	Command []string `json:"command,omitempty"`
	// ConfigFiles are the config files read, a base before the file
	// that names it.
	ConfigFiles []configs.SourceFile `json:"config_files"`
	// Sets are the --set overrides, in the order applied.
	Sets []string `json:"sets"`
	// ConfigHash is the SHA-256 of the effective config (config.yaml's
	// values).
	ConfigHash string `json:"config_hash"`
	// ConfigDescription is the config's description: the hardware, and
	// what of it is not modelled.
	ConfigDescription string `json:"config_description"`
	// FidelityChanges are the fidelity settings (what is simulated, not
	// the hardware) that differ from the built-in defaults, as
	// "key=value (default D)": results made with them say so.
	FidelityChanges []string         `json:"fidelity_changes,omitempty"`
	Workloads       []WorkloadSource `json:"workloads"`
}

// WorkloadSource is one workload of a run and where it came from
// (workloads.Origin: an exported trace records the same).
type WorkloadSource = workloads.Origin

// WeightsSource is one weights path of a workload and its content hash.
type WeightsSource = workloads.WeightsSource

// LayerResult is one GEMM (a layer, or one --gemm) simulated in one mode:
// the record of stcsim's machine-readable output. Field names are the
// stable JSON/CSV contract (see docs/user-guide.md).
type LayerResult struct {
	Workload      string               `json:"workload"`
	Layer         string               `json:"layer"`
	M             int                  `json:"m"`
	N             int                  `json:"n"`
	K             int                  `json:"k"`
	Batch         int                  `json:"batch"`
	Precision     tensorcore.Precision `json:"precision"`
	Mode          tensorcore.Mode      `json:"mode"`
	SparseApplied bool                 `json:"sparse_applied"`
	// Pattern and SparseOperand describe a record run sparse: the N:M
	// pattern and which operand it prunes (weights or activations).
	Pattern       string `json:"pattern,omitempty"`
	SparseOperand string `json:"sparse_operand,omitempty"`
	// Pass is the record's role in a training step (forward, dgrad,
	// wgrad, overhead; empty in an inference run) and SparseAlong the
	// operand and dimension that is N:M in a training GEMM's sparse run.
	Pass        string `json:"pass,omitempty"`
	SparseAlong string `json:"sparse_along,omitempty"`
	// Layout is the row's operand layout (nn, nt, tn, tt) when it names
	// one; absent, the row ran tn (A row-major, B column-major).
	Layout string `json:"layout,omitempty"`
	// DualSide marks the hypothetical dual-side mode; Masks says where its
	// masks came from and DualProducts is the mean products per MMA their
	// intersection leaves.
	DualSide     bool   `json:"dual_side,omitempty"`
	Masks        string `json:"masks,omitempty"`
	DualProducts int    `json:"dual_products_per_mma,omitempty"`
	Count        int    `json:"count"`
	Kernel       string `json:"kernel"`
	SplitK       int    `json:"split_k"`
	// Schedule is how the kernel divided the GEMM among CTAs:
	// data_parallel or split_k_parallel (sim/kernel.Schedule; docs/sm.md).
	Schedule string `json:"schedule"`
	// TailCycles are the cycles the kernel ran with some SM idle for
	// good (its last wave's, or last partial CTAs', time alone);
	// FixupBytes and FixupWaitCycles the fix-up's traffic (partial sums,
	// a serial split's D read back, flags) and the cycles its CTAs waited
	// on flags, summed over CTAs: 0 but for serial split-K and stream-K
	// (docs/sm.md).
	TailCycles      uint64  `json:"tail_cycles"`
	FixupBytes      uint64  `json:"fixup_bytes"`
	FixupWaitCycles uint64  `json:"fixup_wait_cycles"`
	Cycles          uint64  `json:"cycles"`
	TimeUS          float64 `json:"time_us"`
	TFLOPS          float64 `json:"tflops"`
	TCUtilization   float64 `json:"tc_utilization"`
	// UsefulUtilization is the layer's own work (2·M·N·K·batch of the
	// unpadded GEMM, the multiplies a sparse kernel skips counted as done)
	// per second against the dense peak of its precision at the clock it
	// ran at: padded tiles and padded rows are not useful work, and dense
	// and sparse records share one scale (a 2:4 kernel can reach 2).
	// TCUtilization is the other figure: issue-slot occupancy against the
	// mode's own peak.
	UsefulUtilization float64 `json:"useful_utilization"`
	// DRAM traffic during the record's time (cycles); the L2's write-back
	// of D after the kernel is DRAMWritebackBytes, outside that time.
	DRAMReadBytes      uint64  `json:"dram_read_bytes"`
	DRAMWriteBytes     uint64  `json:"dram_write_bytes"`
	DRAMWritebackBytes uint64  `json:"dram_writeback_bytes"`
	DRAMGBps           float64 `json:"dram_gbps"`
	L2HitRate          float64 `json:"l2_hit_rate"`
	MetadataBytes      uint64  `json:"metadata_bytes"`
	SmemBytes          uint64  `json:"smem_bytes"`
	L2Bytes            uint64  `json:"l2_bytes"`
	Bound              string  `json:"bound"`
	// Breakdown is the share of the kernel's time attributed to each
	// resource: compute, smem, l2, dram, latency (sums to 1).
	Breakdown Breakdown `json:"breakdown"`
	// Phases is the same time by phase of a CTA's life: launch, prologue
	// fill, mainloop, epilogue, last wave (sums to 1; Fixed is launch,
	// prologue and epilogue, which do not grow with K).
	Phases  Phases  `json:"phases"`
	Speedup float64 `json:"speedup,omitempty"`
	// Traffic is a sparse record's compulsory DRAM bytes against its
	// dense twin's, when the dense kernel is memory-bound: the
	// compressed-weight ceiling that answers "why not 2x" there.
	Traffic *Traffic `json:"traffic,omitempty"`
	Note    string   `json:"note,omitempty"`
	// Cache says whether the record came from the simulation cache
	// ("hit": simulated by an earlier run of the same simulator source,
	// config, GEMM shape and operands, and mode, whatever the workload
	// and layer were called) or was simulated and stored ("miss"); empty
	// with no cache.
	Cache string `json:"cache,omitempty"`
	// Fidelity is the tier that timed the record: "instruction" (the
	// instruction-level SM) or "fast" (sim/fast, sim.fidelity=fast);
	// FidelityErrorPct, on fast records, is that tier's stated error (the
	// largest per-kernel |error| against the instruction tier its long
	// tests measured, fast.StatedErrorPct).
	Fidelity         string  `json:"fidelity"`
	FidelityErrorPct float64 `json:"fidelity_error_pct,omitempty"`
	// Straggler is the SM that ran on alone after every other SM had
	// finished, when that took at least 2 % of Cycles (in the reported
	// run; absent otherwise and for records extended in K).
	Straggler *Straggler `json:"straggler,omitempty"`
	// Candidates are the kernels the selection simulated, best first,
	// with their sample-estimated cycles (the ensemble mean with
	// sim.jitter_runs > 1); the first is Kernel.
	Candidates []Candidate `json:"candidates,omitempty"`
	// CyclesMean and CyclesSpread ((max - min) / mean) are over the
	// sim.jitter_runs full runs of the selected kernel (absent with one
	// run); Cycles, TimeUS and TFLOPS are then the ensemble mean, the
	// traffic and breakdown those of the unperturbed run.
	CyclesMean   float64 `json:"cycles_mean,omitempty"`
	CyclesSpread float64 `json:"cycles_spread,omitempty"`

	Power
	Cost

	// What explains the record: the launch and, for sparse records, the
	// loss decomposition (see Explain).
	Explain
}

// Explain is the part of a record that says why it took its time: the
// launch's shape and occupancy, and for a sparse record of a pruned
// layer, where the time went that kept it from the ideal speedup.
type Explain struct {
	CTAs int `json:"ctas"`
	// Waves is CTAs over (SMs x CTAs per SM), rounded up.
	Waves     int `json:"waves"`
	CTAsPerSM int `json:"ctas_per_sm"`
	// OccupancyLimit is what capped CTAs per SM: "cta slots", "threads",
	// "registers" or "shared memory".
	OccupancyLimit string `json:"occupancy_limit"`
	// IdealSpeedup is the sparse pattern's math speedup (2 for 2:4 and
	// 1:2); 0 on dense records and layers that ran dense.
	IdealSpeedup float64 `json:"ideal_speedup,omitempty"`
	// LossUS is the sparse time beyond dense time / IdealSpeedup, and
	// Loss its split by cause: for each cause, (sparse time on it) -
	// (dense time on it) / IdealSpeedup, as a share of LossUS. Shares sum
	// to 1; a negative one is a cause that shrank by more than the ideal.
	// Absent when there is no dense record or no loss.
	LossUS float64   `json:"loss_us,omitempty"`
	Loss   Breakdown `json:"loss,omitzero"`
}

// Candidate is one kernel the selection simulated for a record.
type Candidate struct {
	Kernel          string  `json:"kernel"`
	EstimatedCycles float64 `json:"estimated_cycles"`
	// Spread is (max - min) / mean of its estimates over the ensemble.
	Spread float64 `json:"spread,omitempty"`
	// Pruned: its sample was stopped once it provably could not beat a
	// candidate simulated before it, and EstimatedCycles is the lower
	// bound that proved it (tensor cores at full rate for its MMAs left).
	Pruned bool `json:"pruned,omitempty"`
}

// Straggler is one SM that ended a kernel alone: which, how many CTAs it
// was still running when the last other SM finished, and for how many
// cycles it then ran alone.
type Straggler struct {
	SM          int    `json:"sm"`
	CTAs        int    `json:"ctas"`
	AloneCycles uint64 `json:"alone_cycles"`
}

// FLOPs is the layer's arithmetic of one pass as the dense GEMM counts
// it: 2mnk per GEMM of the batch (sparse records count the same, so
// TFLOPS are dense-equivalent).
func (r LayerResult) FLOPs() float64 {
	return 2 * float64(r.M) * float64(r.N) * float64(r.K) * float64(max(1, r.Batch))
}

// Margin is the selected kernel's estimated lead over the runner-up,
// (runner-up - winner) / winner; 0 with fewer than two candidates. When
// the runner-up was pruned it is a lower bound (MarginIsBound).
func (r LayerResult) Margin() float64 {
	if len(r.Candidates) < 2 || r.Candidates[0].EstimatedCycles <= 0 {
		return 0
	}
	c := r.Candidates
	return (c[1].EstimatedCycles - c[0].EstimatedCycles) / c[0].EstimatedCycles
}

// MarginIsBound reports whether Margin is only a lower bound: the
// runner-up's sample was pruned.
func (r LayerResult) MarginIsBound() bool {
	return len(r.Candidates) >= 2 && r.Candidates[1].Pruned
}

// Power is a record's clock, energy and power (docs/power.md): one call
// of the GEMM, like time_us.
type Power struct {
	// ClockMHz is the SM clock the kernel ran at (gpu.clock_policy).
	ClockMHz int `json:"clock_mhz"`
	// EnergyUJ is the board energy of one call, in microjoules.
	EnergyUJ float64 `json:"energy_uj"`
	// AvgPowerW is EnergyUJ over the kernel's time, in watts.
	AvgPowerW float64 `json:"avg_power_w"`
	// AbovePowerLimit: under gpu.clock_policy=locked the kernel draws
	// more than power.limit_w, which the board would not sustain (it
	// would lower its clock; power_capped models that).
	AbovePowerLimit bool `json:"above_power_limit,omitempty"`
	// Energy splits EnergyUJ by event class (microjoules).
	Energy energy.Breakdown `json:"energy"`
	// EnergySaving (sparse records): dense energy / sparse energy of the
	// same layer.
	EnergySaving float64 `json:"energy_saving,omitempty"`
}

// Total is one workload in one mode: the sum over its layers.
type Total struct {
	Workload string          `json:"workload"`
	Mode     tensorcore.Mode `json:"mode"`
	TimeUS   float64         `json:"time_us"`
	Speedup  float64         `json:"speedup,omitempty"`
	TotalPower
	TokenRate
}

// Traffic is the compulsory DRAM traffic of a GEMM run sparse, by
// operand: the kept weight values, their metadata, the activations (B:
// tokens, or for attention the KV cache) and the output, each read or
// written once; DenseBytes is the same for the dense kernel. Ceiling is
// DenseBytes over the sparse sum: the most a memory-bound layer can gain
// (fp16 2:4 weights move 56.25 % of their dense bytes: 1.78x at most).
type Traffic struct {
	WeightBytes     int64   `json:"weight_bytes"`
	MetadataBytes   int64   `json:"metadata_bytes"`
	ActivationBytes int64   `json:"activation_bytes"`
	OutputBytes     int64   `json:"output_bytes"`
	DenseBytes      int64   `json:"dense_bytes"`
	Ceiling         float64 `json:"ceiling"`
}

// TokenRate is a decoder LLM workload's pass read as tokens (a pass of
// all its layers, not filtered by --layer): at prefill the prompt's
// batch x seq tokens, at decode one new token per sequence.
type TokenRate struct {
	Phase  string `json:"phase,omitempty"`
	Tokens int    `json:"tokens,omitempty"`
	// TokensPerS is Tokens over the pass's time.
	TokensPerS float64 `json:"tokens_per_s,omitempty"`
	// MSPerOutputToken is the time of one decode step (each sequence's
	// next token): the pass's time; at prefill, the time to the first
	// token.
	MSPerOutputToken float64 `json:"ms_per_output_token,omitempty"`
	// EnergyPerTokenMJ is the pass's energy over its tokens.
	EnergyPerTokenMJ float64 `json:"energy_per_token_mj,omitempty"`
}

// TotalPower is a workload's energy per network pass: the sum over its
// layers of energy x count.
type TotalPower struct {
	EnergyUJ  float64 `json:"energy_uj"`
	AvgPowerW float64 `json:"avg_power_w"`
	// Energy splits EnergyUJ by event class (microjoules).
	Energy       energy.Breakdown `json:"energy"`
	EnergySaving float64          `json:"energy_saving,omitempty"`
}

// Cost is what a record's configuration costs in silicon and what its
// run gives per unit of area and power (docs/area.md): the GPU's area
// from the area model, TFLOPS per mm2 of it and per watt of the record's
// average power, and the energy-delay product of one call.
type Cost struct {
	// AreaMM2 is the GPU die of the config: every SM on it and the uncore.
	AreaMM2      float64 `json:"area_mm2"`
	TFLOPSPerMM2 float64 `json:"tflops_per_mm2"`
	TFLOPSPerW   float64 `json:"tflops_per_w"`
	// EnergyDelay is energy_uj x time_us (pJ s).
	EnergyDelay float64 `json:"energy_delay"`
}

// NewCost derives a record's cost fields from the GPU's area and the
// record's throughput, power, energy and time.
func NewCost(areaMM2, tflops, avgPowerW, energyUJ, timeUS float64) Cost {
	c := Cost{AreaMM2: areaMM2, EnergyDelay: energyUJ * timeUS}
	if areaMM2 > 0 {
		c.TFLOPSPerMM2 = tflops / areaMM2
	}
	if avgPowerW > 0 {
		c.TFLOPSPerW = tflops / avgPowerW
	}
	return c
}
