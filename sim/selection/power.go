package selection

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// RunRanked picks the kernel of a GEMM among its ranked candidates
// (plans: Rank's list, which the caller ranked once) and runs it under
// the config's clock policy: locked keeps gpu.clock_mhz; power_capped
// re-times the chosen kernel at the highest clock of the V/f table that
// keeps its average power within power.limit_w.
//
// Under sim.fidelity=fast the fast tier selects and times it
// (selectFast).
func RunRanked(cfg *configs.Config, g kernel.Shape, plans []*kernel.Plan, obs gpu.Observer) (*gpu.Result, error) {
	if len(plans) == 0 {
		return nil, NoKernelError(cfg, g, nil)
	}
	if cfg.Sim.Fidelity == configs.FidelityFast {
		return selectFast(cfg, plans, obs)
	}
	return runInstruction(cfg, plans, obs)
}

// runInstruction is RunRanked on the instruction-level SM.
func runInstruction(cfg *configs.Config, plans []*kernel.Plan, obs gpu.Observer) (*gpu.Result, error) {
	k, err := runSelected(cfg, plans, obs)
	if k != nil {
		k.Fidelity = configs.FidelityInstruction
	}
	return k, err
}

// runSelected selects the kernel on the instruction-level SM and
// applies the clock policy.
func runSelected(cfg *configs.Config, plans []*kernel.Plan, obs gpu.Observer) (*gpu.Result, error) {
	k, err := selectRanked(cfg, plans, obs)
	if err != nil || cfg.GPU.ClockPolicy != energy.PowerCapped {
		return k, err
	}
	return CapClock(cfg, k, obs)
}

// CapClock finds the highest clock at which the kernel's simulated power
// fits the limit, re-simulating the kernel at each clock it tries (the
// whole kernel, or under sim.retime_probe_ksteps a probe short in K:
// retime.go).
func CapClock(cfg *configs.Config, k *gpu.Result, obs gpu.Observer) (*gpu.Result, error) {
	pw := cfg.Power
	if kernelPower(cfg, k) <= pw.LimitW {
		return k, nil
	}
	clocks := pw.Clocks(cfg.GPU.ClockMHz)
	runs := map[int]*gpu.Result{cfg.GPU.ClockMHz: k}
	retime := retimerFor(cfg, k, obs)
	fits := func(mhz int) (bool, error) {
		r, ok := runs[mhz]
		if !ok {
			var err error
			if r, err = retime(mhz); err != nil {
				return false, err
			}
			runs[mhz] = r
		}
		return kernelPower(cfg, r) <= pw.LimitW, nil
	}
	start := pw.PredictClock(k.Act, k.Cycles, clocks)
	mhz, ok, err := energy.HighestFitting(clocks, start, fits)
	if err != nil {
		return nil, err
	}
	r := runs[mhz]
	// The re-timed kernel is one unperturbed run at the capped clock
	// (no jitter ensemble there); the selection's candidates stay.
	r.Candidates = k.Candidates
	if !ok {
		r.PowerNote = fmt.Sprintf("above power.limit_w %.0f W even at "+
			"the lowest clock, %d MHz", pw.LimitW, mhz)
	}
	return r, nil
}

// AboveLimit says whether kernel k's average power (one run's) is above
// power.limit_w, the test CapClock starts with.
func AboveLimit(cfg *configs.Config, k *gpu.Result) bool {
	return kernelPower(cfg, k) > cfg.Power.LimitW
}

// kernelPower is a kernel's average board power in watts.
func kernelPower(cfg *configs.Config, k *gpu.Result) float64 {
	b, err := cfg.Power.Energy(k.Act, k.Cycles, k.ClockMHz)
	if err != nil {
		return 0
	}
	return energy.Power(b.Total(), k.Cycles, k.ClockMHz)
}

// configAt is the config with the SM clock at mhz. The memory clock domains
// stay: DRAM bandwidth is in GB/s already, and the part of the DRAM
// latency beyond an L2 hit keeps its time in nanoseconds (L2 and the
// crossbar run on the SM clock and keep their cycles).
func configAt(cfg *configs.Config, mhz int) *configs.Config {
	c := *cfg
	c.GPU.ClockMHz = mhz
	l2 := float64(c.Memory.L2.NearLatency+c.Memory.L2.FarLatency) / 2
	beyond := float64(c.Memory.DRAM.Latency) - l2
	// At very low clocks the scaled latency would undercut the far L2
	// hit that every DRAM access includes.
	c.Memory.DRAM.Latency = max(c.Memory.L2.FarLatency, int(l2+
		beyond*float64(mhz)/float64(cfg.GPU.ClockMHz)+0.5))
	return &c
}

// PredictedPower is the pre-model's average board power of plan p at
// gpu.clock_mhz, in watts, for the work estimate (BudgetOf): the energy
// model (power.*) over the plan's demands (sim/demand: its MMAs and their
// register-file operands, its shared-memory wavefronts, its stages'
// bytes through the crossbar and L2, a GEMV's FP32-pipe instructions and
// their thread operations, its operands' unique bytes and D
// from DRAM) and the ranking's estimate of its cycles (Estimate). It
// leaves out the instructions other than MMAs and a GEMV's FP32 ones, and the traffic beyond
// the operands' unique bytes, and the estimate is optimistic in cycles,
// so it is an estimate, not a bound: TestPredictedPowerSidesWithTheRun
// holds it to the simulated power's side of the limit on a few shapes.
func PredictedPower(cfg *configs.Config, p *kernel.Plan) float64 {
	d := demand.Of(cfg, p)
	pc, err := cfg.TensorCore.Get(p.Shape.Precision)
	if err != nil {
		return 0
	}
	sh, err := tensorcore.ParseShape(pc.DenseShape)
	if err != nil {
		return 0
	}
	sparse := p.Shape.KernelMode() == tensorcore.Sparse
	kept := tensorcore.DensePattern
	if sparse {
		if kept = p.Shape.Pattern; kept == (tensorcore.Pattern{}) {
			kept = pc.Pattern()
		}
		if sh, err = kept.SparseShape(sh); err != nil {
			return 0
		}
	}
	ksteps := uint64(d.KSteps)
	mmas := uint64(d.MMAs) * ksteps
	fmas := mmas * uint64(sh.M*sh.N*kept.Kept(sh.K))
	read, write := energy.MMARegisterBytes(sh.M, sh.N, sh.K, kept.Kept(sh.K),
		p.Shape.Precision.ElementBytes(), sparse)
	stage := uint64(d.Stage.Bytes()) * ksteps
	fp32 := uint64(p.FMAPerKStep()) * ksteps // a GEMV's FP32-pipe instructions
	n := energy.Counts{Precision: p.Shape.Precision, SMs: cfg.GPU.SMCount,
		SM: energy.SMActivity{Instructions: mmas + fp32, RFReadBytes: mmas * read,
			RFWriteBytes: mmas * write, FP32Ops: 32 * fp32},
		SmemWavefronts: uint64(d.Wavefronts) * ksteps, L2Sectors: stage / 32, CrossbarBytes: stage,
		DRAMBytes: uint64(d.OperandBytes() + d.DBytes)}
	if sparse {
		n.SparseMMAs, n.SparseFMAs = mmas, fmas
	} else {
		n.DenseMMAs, n.DenseFMAs = mmas, fmas
	}
	cycles := uint64(max(1, Estimate(cfg, p)))
	b, err := cfg.Power.Energy(n, cycles, cfg.GPU.ClockMHz)
	if err != nil {
		return 0
	}
	return energy.Power(b.Total(), cycles, cfg.GPU.ClockMHz)
}
