package energy

import "github.com/stcsim/stcsim/tensorcore"

// Counts are the events of one kernel, as the simulation counted them.
type Counts struct {
	Precision tensorcore.Precision
	// DenseMMAs and SparseMMAs are tensor-core instructions issued.
	DenseMMAs, SparseMMAs uint64
	// DenseFMAs and SparseFMAs are multiply-accumulates performed by each
	// datapath (a sparse MMA performs half its dense-equivalent FMAs).
	DenseFMAs, SparseFMAs uint64
	// SM holds the counts the instruction-level SM provides.
	SM SMActivity
	// SmemWavefronts are shared-memory bank-array cycles (all accesses).
	SmemWavefronts uint64
	// L1Sectors and L2Sectors are 32-byte sector lookups (hits and misses).
	L1Sectors, L2Sectors uint64
	// CrossbarBytes moved between SMs and L2, both ways.
	CrossbarBytes uint64
	// DRAMBytes read and written.
	DRAMBytes uint64
	// SMs is the number of SMs powered during the kernel.
	SMs int
}

// SMActivity are the SM-side counts: instructions issued, register-file
// traffic and the FP32 pipe's operations.
type SMActivity struct {
	Instructions uint64
	RFReadBytes  uint64
	RFWriteBytes uint64
	// FP32Ops are the FP32 pipe's thread operations (FFMA, FADD, FMUL and
	// conversions to FP32: 32 per warp instruction), the CUDA cores'
	// arithmetic beside the tensor cores'.
	FP32Ops uint64
}

// Counters are every event count of c, in a fixed order (not Precision
// and SMs, which describe the kernel), for the code that extends a run's
// counts to work it did not simulate. A count added to Counts must be
// listed here (TestCountersCoverEveryField).
func (c *Counts) Counters() []*uint64 {
	return []*uint64{&c.DenseMMAs, &c.SparseMMAs, &c.DenseFMAs, &c.SparseFMAs,
		&c.SM.Instructions, &c.SM.RFReadBytes, &c.SM.RFWriteBytes, &c.SM.FP32Ops,
		&c.SmemWavefronts, &c.L1Sectors, &c.L2Sectors, &c.CrossbarBytes, &c.DRAMBytes}
}

// Add returns the sum of two count sets of the same precision and SMs.
func (c Counts) Add(o Counts) Counts {
	c.DenseMMAs += o.DenseMMAs
	c.SparseMMAs += o.SparseMMAs
	c.DenseFMAs += o.DenseFMAs
	c.SparseFMAs += o.SparseFMAs
	c.SM.Instructions += o.SM.Instructions
	c.SM.RFReadBytes += o.SM.RFReadBytes
	c.SM.RFWriteBytes += o.SM.RFWriteBytes
	c.SM.FP32Ops += o.SM.FP32Ops
	c.SmemWavefronts += o.SmemWavefronts
	c.L1Sectors += o.L1Sectors
	c.L2Sectors += o.L2Sectors
	c.CrossbarBytes += o.CrossbarBytes
	c.DRAMBytes += o.DRAMBytes
	return c
}

// Breakdown is a kernel's energy by event class, in microjoules. Its JSON
// keys are part of stcsim's output contract (docs/user-guide.md).
type Breakdown struct {
	// MMA is the tensor-core multiply-accumulates (dense and sparse) and
	// their operands' way over the A and B paths.
	MMA float64 `json:"mma"`
	// Metadata is sparse MMAs' metadata path and decode and selector muxes.
	Metadata float64 `json:"metadata"`
	// FP32 is the FP32 pipe's datapath (the CUDA cores' FFMAs, FADDs,
	// FMULs and conversions); their issue and register traffic are in
	// Issue and RegisterFile.
	FP32         float64 `json:"fp32"`
	RegisterFile float64 `json:"register_file"`
	Issue        float64 `json:"issue"`
	Smem         float64 `json:"smem"`
	L1           float64 `json:"l1"`
	L2           float64 `json:"l2"`
	Crossbar     float64 `json:"crossbar"`
	DRAM         float64 `json:"dram"`
	// SMStatic is SM leakage and clock tree over the kernel's time.
	SMStatic float64 `json:"sm_static"`
	// Board is clock-independent board power over the kernel's time.
	Board float64 `json:"board"`
}

// Total is the sum of every class.
func (b Breakdown) Total() float64 {
	return b.MMA + b.Metadata + b.FP32 + b.RegisterFile + b.Issue + b.Smem + b.L1 +
		b.L2 + b.Crossbar + b.DRAM + b.SMStatic + b.Board
}

// Classes are the breakdown's classes in output order, with their values.
func (b Breakdown) Classes() []Class {
	return []Class{{"mma", b.MMA}, {"metadata", b.Metadata}, {"fp32", b.FP32},
		{"register_file", b.RegisterFile}, {"issue", b.Issue},
		{"smem", b.Smem}, {"l1", b.L1}, {"l2", b.L2},
		{"crossbar", b.Crossbar}, {"dram", b.DRAM},
		{"sm_static", b.SMStatic}, {"board", b.Board}}
}

// Class is one event class's energy.
type Class struct {
	Name string
	UJ   float64
}

// Scale multiplies every class by f.
func (b Breakdown) Scale(f float64) Breakdown {
	return Breakdown{MMA: b.MMA * f, Metadata: b.Metadata * f, FP32: b.FP32 * f,
		RegisterFile: b.RegisterFile * f, Issue: b.Issue * f, Smem: b.Smem * f,
		L1: b.L1 * f, L2: b.L2 * f, Crossbar: b.Crossbar * f, DRAM: b.DRAM * f,
		SMStatic: b.SMStatic * f, Board: b.Board * f}
}

// Plus adds two breakdowns class by class.
func (b Breakdown) Plus(o Breakdown) Breakdown {
	return Breakdown{MMA: b.MMA + o.MMA, Metadata: b.Metadata + o.Metadata,
		FP32:         b.FP32 + o.FP32,
		RegisterFile: b.RegisterFile + o.RegisterFile, Issue: b.Issue + o.Issue,
		Smem: b.Smem + o.Smem, L1: b.L1 + o.L1, L2: b.L2 + o.L2,
		Crossbar: b.Crossbar + o.Crossbar, DRAM: b.DRAM + o.DRAM,
		SMStatic: b.SMStatic + o.SMStatic, Board: b.Board + o.Board}
}

// Energy is the energy of a kernel that ran for cycles at mhz with the
// given event counts.
func (c Config) Energy(n Counts, cycles uint64, mhz int) (Breakdown, error) {
	e := c.Events
	mma, err := e.MMA.Get(n.Precision)
	if err != nil {
		return Breakdown{}, err
	}
	v := c.Volts(mhz) / c.topVolts()
	dyn := v * v * 1e-6 // pJ at the top voltage -> uJ at this clock's
	mma *= 1 - e.DataShare + e.DataShare*c.DataActivity/0.5
	sec := float64(cycles) / (float64(mhz) * 1e6)
	sms := float64(n.SMs)
	dp := c.Paths[PathKey{n.Precision, tensorcore.Dense}]
	sp := c.Paths[PathKey{n.Precision, tensorcore.Sparse}]
	dense, sparse := float64(n.DenseMMAs), float64(n.SparseMMAs)
	return Breakdown{
		MMA: dyn * (mma*float64(n.DenseFMAs+n.SparseFMAs) +
			dp.OperandPJ*dense + sp.OperandPJ*sparse),
		Metadata: dyn * sparse * (e.SparseSelect*sp.MuxPasses +
			sp.MetadataPJ + e.MetadataDecode),
		FP32: dyn * e.FP32 * float64(n.SM.FP32Ops),
		RegisterFile: dyn * (e.RFRead*float64(n.SM.RFReadBytes) +
			e.RFWrite*float64(n.SM.RFWriteBytes)),
		Issue:    dyn * e.Issue * float64(n.SM.Instructions),
		Smem:     dyn * e.SmemWavefront * float64(n.SmemWavefronts),
		L1:       dyn * e.L1Sector * float64(n.L1Sectors),
		L2:       dyn * e.L2Sector * float64(n.L2Sectors),
		Crossbar: dyn * e.Crossbar * float64(n.CrossbarBytes),
		// HBM and its PHY have their own supply: not scaled by the SM
		// voltage.
		DRAM: e.DRAM * float64(n.DRAMBytes) * 1e-6,
		SMStatic: sms * (c.SMLeakageW*v*sec*1e6 +
			dyn*c.SMClockPJ*float64(cycles)),
		Board: c.BoardStaticW * sec * 1e6,
	}, nil
}

// Power is the average power in watts of energy uj spent over cycles at mhz.
func Power(uj float64, cycles uint64, mhz int) float64 {
	if cycles == 0 {
		return 0
	}
	return uj * float64(mhz) / float64(cycles)
}

// IdlePower is the board's power with every SM clocked at mhz and no work.
func (c Config) IdlePower(sms, mhz int) float64 {
	b, _ := c.Energy(Counts{Precision: tensorcore.FP16, SMs: sms}, uint64(mhz)*1e6, mhz)
	return b.Total() / 1e6
}

// Policy names accepted by gpu.clock_policy.
const (
	Locked      = "locked"
	PowerCapped = "power_capped"
)

// Policies lists the clock policies.
var Policies = []string{Locked, PowerCapped}

// HighestFitting returns the highest of clocks (descending) for which fits
// is true, starting the search at index start and walking up while the
// clock above fits or down until one does; fits must be monotone (a
// kernel that fits at a clock fits at every lower one). It returns the
// lowest clock, and false, when none fits.
func HighestFitting(clocks []int, start int, fits func(mhz int) (bool, error)) (int, bool, error) {
	start = max(0, min(start, len(clocks)-1))
	ok, err := fits(clocks[start])
	if err != nil {
		return 0, false, err
	}
	i := start
	if ok {
		for i > 0 {
			up, err := fits(clocks[i-1])
			if err != nil {
				return 0, false, err
			}
			if !up {
				break
			}
			i--
		}
		return clocks[i], true, nil
	}
	for i+1 < len(clocks) {
		i++
		down, err := fits(clocks[i])
		if err != nil {
			return 0, false, err
		}
		if down {
			return clocks[i], true, nil
		}
	}
	return clocks[len(clocks)-1], false, nil
}

// PredictClock is the index in clocks (descending) of the highest clock at
// which a kernel measured at cycles (its counts n) stays within the limit
// if its cycle count did not change with the clock: an upper bound on its
// power at lower clocks, so the clock it gives is a safe start for
// HighestFitting.
func (c Config) PredictClock(n Counts, cycles uint64, clocks []int) int {
	for i, f := range clocks {
		b, err := c.Energy(n, cycles, f)
		if err != nil {
			return 0
		}
		if Power(b.Total(), cycles, f) <= c.LimitW {
			return i
		}
	}
	return len(clocks) - 1
}

// MMARegisterBytes are the register-file bytes one warp's MMA instruction
// of shape m x n x k reads (A with keptK of its k values along K, B, the
// FP32/INT32 accumulator C and, sparse, one 32-bit metadata register per
// thread) and writes (the accumulator D).
func MMARegisterBytes(m, n, k, keptK, elemBytes int, sparse bool) (read, write uint64) {
	const acc, lanes = 4, 32
	a := m * keptK * elemBytes
	meta := 0
	if sparse {
		meta = lanes * 4
	}
	return uint64(a + k*n*elemBytes + m*n*acc + meta), uint64(m * n * acc)
}
