package sim

import "github.com/stcsim/stcsim/tensorcore"

// LayerResult is one GEMM (a layer, or one --gemm) simulated in one mode:
// the record of stcsim's machine-readable output. Field names are the
// stable JSON/CSV contract (see docs/user-guide.md).
type LayerResult struct {
	Workload       string               `json:"workload"`
	Layer          string               `json:"layer"`
	M              int                  `json:"m"`
	N              int                  `json:"n"`
	K              int                  `json:"k"`
	Batch          int                  `json:"batch"`
	Precision      tensorcore.Precision `json:"precision"`
	Mode           tensorcore.Mode      `json:"mode"`
	SparseApplied  bool                 `json:"sparse_applied"`
	Count          int                  `json:"count"`
	Kernel         string               `json:"kernel"`
	SplitK         int                  `json:"split_k"`
	Cycles         uint64               `json:"cycles"`
	TimeUS         float64              `json:"time_us"`
	TFLOPS         float64              `json:"tflops"`
	TCUtilization  float64              `json:"tc_utilization"`
	DRAMReadBytes  uint64               `json:"dram_read_bytes"`
	DRAMWriteBytes uint64               `json:"dram_write_bytes"`
	DRAMGBps       float64              `json:"dram_gbps"`
	L2HitRate      float64              `json:"l2_hit_rate"`
	MetadataBytes  uint64               `json:"metadata_bytes"`
	SmemBytes      uint64               `json:"smem_bytes"`
	L2Bytes        uint64               `json:"l2_bytes"`
	Bound          string               `json:"bound"`
	// Breakdown is the share of the kernel's time attributed to each
	// resource: compute, smem, l2, dram, latency (sums to 1).
	Breakdown Breakdown `json:"breakdown"`
	Speedup   float64   `json:"speedup,omitempty"`
	Note      string    `json:"note,omitempty"`
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
}

// Candidate is one kernel the selection simulated for a record.
type Candidate struct {
	Kernel          string  `json:"kernel"`
	EstimatedCycles float64 `json:"estimated_cycles"`
	// Spread is (max - min) / mean of its estimates over the ensemble.
	Spread float64 `json:"spread,omitempty"`
}

// Margin is the selected kernel's estimated lead over the runner-up,
// (runner-up - winner) / winner; 0 with fewer than two candidates.
func (r LayerResult) Margin() float64 {
	if len(r.Candidates) < 2 || r.Candidates[0].EstimatedCycles <= 0 {
		return 0
	}
	c := r.Candidates
	return (c[1].EstimatedCycles - c[0].EstimatedCycles) / c[0].EstimatedCycles
}

// Breakdown splits a kernel's time among the resources that bound it.
type Breakdown struct {
	Compute float64 `json:"compute"`
	Smem    float64 `json:"smem"`
	L2      float64 `json:"l2"`
	DRAM    float64 `json:"dram"`
	Latency float64 `json:"latency"`
}

// Total is one workload in one mode: the sum over its layers.
type Total struct {
	Workload string          `json:"workload"`
	Mode     tensorcore.Mode `json:"mode"`
	TimeUS   float64         `json:"time_us"`
	Speedup  float64         `json:"speedup,omitempty"`
}
