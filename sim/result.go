package sim

import (
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/tensorcore"
)

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
	// DualSide marks the hypothetical dual-side mode; Masks says where its
	// masks came from and DualProducts is the mean products per MMA their
	// intersection leaves.
	DualSide      bool    `json:"dual_side,omitempty"`
	Masks         string  `json:"masks,omitempty"`
	DualProducts  int     `json:"dual_products_per_mma,omitempty"`
	Count         int     `json:"count"`
	Kernel        string  `json:"kernel"`
	SplitK        int     `json:"split_k"`
	Cycles        uint64  `json:"cycles"`
	TimeUS        float64 `json:"time_us"`
	TFLOPS        float64 `json:"tflops"`
	TCUtilization float64 `json:"tc_utilization"`
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
	Speedup   float64   `json:"speedup,omitempty"`
	Note      string    `json:"note,omitempty"`
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
	// Energy splits EnergyUJ by event class (microjoules).
	Energy energy.Breakdown `json:"energy"`
	// EnergySaving (sparse records): dense energy / sparse energy of the
	// same layer.
	EnergySaving float64 `json:"energy_saving,omitempty"`
}

// Breakdown splits a kernel's tensor-core time (every tensor core's
// every cycle) into busy (compute) and idle by cause: what the warp whose
// MMA ended the idle gap waited on during it (see docs/sm.md). The
// shares sum to 1; every float field is a cause (records' loss and the
// CSV's breakdown_*/loss_* columns iterate them).
type Breakdown struct {
	// Compute: the tensor cores' issue slots were busy.
	Compute float64 `json:"compute"`
	// Smem: a fragment load (LDSM) not back, the MIO queue full, or a
	// stage whose data arrived in time but whose shared-memory write queued.
	Smem float64 `json:"smem"`
	// L2Bandwidth and L2Latency: a cp.async stage fed from L2, its wait
	// split into the queueing beyond the L2 hit latency and the rest.
	L2Bandwidth float64 `json:"l2_bandwidth"`
	L2Latency   float64 `json:"l2_latency"`
	// DRAMBandwidth and DRAMLatency: the same for stages fed from DRAM.
	DRAMBandwidth float64 `json:"dram_bandwidth"`
	DRAMLatency   float64 `json:"dram_latency"`
	// Barrier: BAR.SYNC, waiting for the CTA's other warps and the
	// barrier latency.
	Barrier float64 `json:"barrier"`
	// Dependence: a register written by an earlier ALU or MMA instruction
	// (the accumulator chain, address arithmetic).
	Dependence float64 `json:"dependence"`
	// Issue: the warp's own earlier instructions or other warps held the
	// scheduler's issue slots.
	Issue float64 `json:"issue"`
	// RegisterFile: the register file's read ports were taken.
	RegisterFile float64 `json:"register_file"`
	// TensorPipe: the tensor core's own datapath had not accepted the
	// previous MMA (stage hazards).
	TensorPipe float64 `json:"tensor_pipe"`
	// Launch: the kernel launch, CTA dispatch and launch, and a CTA's
	// first instructions.
	Launch float64 `json:"launch"`
	// Tail: after a sub-partition's last MMA of a CTA until the CTA
	// finished (the epilogue), and the split-K reduction.
	Tail float64 `json:"tail"`
	// Waves: wave quantization, an SM with no CTA left to run while
	// others still work.
	Waves float64 `json:"wave_quantization"`
}

// Total is one workload in one mode: the sum over its layers.
type Total struct {
	Workload string          `json:"workload"`
	Mode     tensorcore.Mode `json:"mode"`
	TimeUS   float64         `json:"time_us"`
	Speedup  float64         `json:"speedup,omitempty"`
	TotalPower
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
