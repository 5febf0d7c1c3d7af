package results

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
	// Fixup: a flag in global memory, serial split-K's semaphore or a
	// stream-K tile's earlier peers (the polls until it held the value),
	// and the fence before signalling one.
	Fixup float64 `json:"fixup"`
}

// Cause is one share of a Breakdown, named as in the JSON and CSV
// (breakdown_<name>, loss_<name>).
type Cause struct {
	Name  string
	Share float64
}

// CauseNames are a Breakdown's causes in field order, by JSON name
// (TestNamesAreTheFields holds them to the struct).
var CauseNames = []string{"compute", "smem", "l2_bandwidth", "l2_latency",
	"dram_bandwidth", "dram_latency", "barrier", "dependence", "issue",
	"register_file", "tensor_pipe", "launch", "tail", "wave_quantization",
	"fixup"}

// Shares are the breakdown's shares in CauseNames order.
func (b Breakdown) Shares() []float64 {
	return []float64{b.Compute, b.Smem, b.L2Bandwidth, b.L2Latency,
		b.DRAMBandwidth, b.DRAMLatency, b.Barrier, b.Dependence, b.Issue,
		b.RegisterFile, b.TensorPipe, b.Launch, b.Tail, b.Waves, b.Fixup}
}

// BreakdownOf is the breakdown with shares in CauseNames order.
func BreakdownOf(s []float64) Breakdown {
	return Breakdown{Compute: s[0], Smem: s[1], L2Bandwidth: s[2], L2Latency: s[3],
		DRAMBandwidth: s[4], DRAMLatency: s[5], Barrier: s[6], Dependence: s[7],
		Issue: s[8], RegisterFile: s[9], TensorPipe: s[10], Launch: s[11],
		Tail: s[12], Waves: s[13], Fixup: s[14]}
}

// Causes are the breakdown's named shares in CauseNames order.
func (b Breakdown) Causes() []Cause {
	out := make([]Cause, len(CauseNames))
	for i, v := range b.Shares() {
		out[i] = Cause{CauseNames[i], v}
	}
	return out
}

// ComputeBoundShare is the tensor-core busy share at and above which a
// kernel is compute bound: within a fifth of its mode's peak rate.
const ComputeBoundShare = 0.8

// Bound names what limits the kernel: "compute" when the tensor cores are
// busy at least ComputeBoundShare of the time, otherwise the largest
// cause of their idle time (so a sparse kernel at 60 % busy whose waits
// are mostly shared memory is smem bound, as its loss split says; the
// first cause in CauseNames order on a tie).
func (b Breakdown) Bound() string {
	if b.Compute >= ComputeBoundShare {
		return "compute"
	}
	best := Cause{Share: -1}
	for _, c := range b.Causes()[1:] {
		if c.Share > best.Share {
			best = c
		}
	}
	return best.Name
}

// Phases splits a kernel's tensor-core time (busy and idle over every
// tensor core, as Breakdown) by where in a CTA's life it went, as shares
// summing to 1. Launch, Prologue and Epilogue are the CTAs' fixed costs,
// which do not grow with K (Fixed); Mainloop is the steady run of MMAs
// that does; LastWave, the SMs without a CTA left while others work,
// grows with the length of the waves, as a share of the whole. Only what
// the tensor cores could not hide is counted: a CTA's prologue that runs
// while another CTA on its SM keeps the tensor cores busy costs nothing.
type Phases struct {
	// Launch: the kernel launch and CTA dispatch, before a CTA's warps
	// ran (Breakdown.Launch).
	Launch float64 `json:"launch"`
	// Prologue: a CTA's pipeline fill, the idle time that ended in a
	// warp's first MMA after the warp started (its wait for the first
	// cp.async stages and fragments).
	Prologue float64 `json:"prologue"`
	// Mainloop: the tensor cores busy, and idle between a warp's MMAs.
	Mainloop float64 `json:"mainloop"`
	// Epilogue: after a CTA's last MMA until it finished (the epilogue's
	// stores), split-K's reduction and fix-up waits (Breakdown.Tail and
	// Fixup).
	Epilogue float64 `json:"epilogue"`
	// LastWave: an SM with no CTA left to run while others still worked
	// (Breakdown.Waves).
	LastWave float64 `json:"last_wave"`
}

// Fixed is the phases' share that does not grow with K: launch,
// prologue and epilogue.
func (p Phases) Fixed() float64 { return p.Launch + p.Prologue + p.Epilogue }

// PhaseNames are Phases' fields in order, by JSON name.
var PhaseNames = []string{"launch", "prologue", "mainloop", "epilogue", "last_wave"}

// Shares are the phases' shares in PhaseNames order.
func (p Phases) Shares() []float64 {
	return []float64{p.Launch, p.Prologue, p.Mainloop, p.Epilogue, p.LastWave}
}
