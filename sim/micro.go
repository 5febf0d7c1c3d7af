package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/tensorcore/unit"
)

// MicroSched is the tensor-core microbenchmark run through the
// instruction-level SM: MMAs issued by warps through the sub-partitions'
// schedulers, scoreboards and register files, not submitted to the
// tensor cores directly.
type MicroSched struct {
	Precision string `json:"precision"`
	Mode      string `json:"mode"`
	// DependentLatency is cycles per MMA of one warp whose every MMA
	// reads the previous one's accumulator (dependent-issue latency).
	DependentLatency float64 `json:"dependent_issue_latency_cycles"`
	// IndependentInterval is cycles per MMA per sub-partition with one
	// warp per sub-partition issuing MMAs on independent accumulators
	// (independent-issue throughput).
	IndependentInterval float64 `json:"independent_issue_cycles_per_mma"`
	// TFLOPS is the independent run's dense-equivalent rate scaled to
	// every SM of the GPU.
	TFLOPS float64 `json:"tflops"`
	// PairsFMAPerClkPerSM is the dense-equivalent FMAs per cycle of one
	// SM with two warps per sub-partition, each cycling over two
	// independent accumulators (the setup of Sun et al.'s mma and mma.sp
	// throughput tables, TPDS 2023, arXiv 2206.02874: 8 warps per SM, 2
	// MMAs in flight per warp), where the MMA latency shows through.
	PairsFMAPerClkPerSM float64 `json:"fma_per_clk_per_sm_2warps_2accs"`
}

// microMMAs is the length of each microbenchmark stream.
const microMMAs = 2048

// MicroScheduler runs both phases for one precision and mode.
func MicroScheduler(cfg *configs.Config, prec tensorcore.Precision, mode tensorcore.Mode) (MicroSched, error) {
	dep, err := microStream(cfg, prec, mode, 1, 1)
	if err != nil {
		return MicroSched{}, err
	}
	ind, err := microStream(cfg, prec, mode, cfg.SM.SubPartitions, 16)
	if err != nil {
		return MicroSched{}, err
	}
	pairs, err := microStream(cfg, prec, mode, 2*cfg.SM.SubPartitions, 2)
	if err != nil {
		return MicroSched{}, err
	}
	sh, err := microShape(cfg, prec, mode)
	if err != nil {
		return MicroSched{}, err
	}
	perSM := float64(cfg.SM.SubPartitions*sh.FMAs()) / ind
	return MicroSched{Precision: prec.String(), Mode: mode.String(),
		DependentLatency: dep, IndependentInterval: ind,
		TFLOPS:              2 * perSM * float64(cfg.GPU.SMCount) * float64(cfg.GPU.ClockMHz) * 1e6 / 1e12,
		PairsFMAPerClkPerSM: float64(2*cfg.SM.SubPartitions*sh.FMAs()) / pairs}, nil
}

// microStream runs one CTA of warps warps on SM 0, each issuing
// microMMAs MMAs that cycle over accs accumulators, and returns cycles
// per MMA per warp between the first issue and the last result.
func microStream(cfg *configs.Config, prec tensorcore.Precision, mode tensorcore.Mode, warps, accs int) (float64, error) {
	c := *cfg
	c.Sim.ExtrapolateWaves = false
	c.SM.KernelLaunchLatency = 0
	p := &kernel.Plan{Shape: kernel.Shape{M: 1, N: 1, K: 1, Batch: 1, Precision: prec,
		Sparse: mode == tensorcore.Sparse},
		Tile:  configs.TileConfig{Stages: 2},
		Warps: warps, CTAs: 1, Occupancy: 1, TilesM: 1, TilesN: 1, Swizzle: 1,
		KSteps: 1}
	pc, err := cfg.TensorCore.Get(prec)
	if err != nil {
		return 0, err
	}
	if err := p.SetInstruction(pc, p.Shape); err != nil {
		return 0, err
	}
	op := isa.OpMMA
	if mode == tensorcore.Sparse {
		op = isa.OpMMASP
	}
	prog := &isa.Program{}
	aBase := isa.Reg(accs * kernel.AccRegsPerMMA)
	for i := 0; i < microMMAs; i++ {
		acc := isa.RegSpan{First: isa.Reg((i % accs) * kernel.AccRegsPerMMA), N: kernel.AccRegsPerMMA}
		in := isa.Instr{Op: op, Dst: acc, Src: [4]isa.RegSpan{{First: aBase, N: 4}, {First: aBase + 4, N: 2}, acc}}
		if op == isa.OpMMASP {
			in.Src[3] = isa.RegSpan{First: aBase + 6, N: 1}
		}
		prog.Prologue = append(prog.Prologue, in)
	}
	// EXIT reads every accumulator, so the warp ends with its last result.
	prog.Prologue = append(prog.Prologue, isa.Instr{Op: isa.OpEXIT,
		Src: [4]isa.RegSpan{{First: 0, N: uint8(accs * kernel.AccRegsPerMMA)}}})
	prog.Regs = int(aBase) + 8
	p.Programs = make([]*isa.Program, warps)
	for w := range p.Programs {
		p.Programs[w] = prog
	}
	g, err := gpu.Build(&c, p)
	if err != nil {
		return 0, err
	}
	if err := g.Run(); err != nil {
		return 0, fmt.Errorf("micro tc through the scheduler: %w", err)
	}
	return float64(g.EndCycle) / microMMAs, nil
}

// microShape is the MMA instruction shape of a precision and mode.
func microShape(cfg *configs.Config, prec tensorcore.Precision, mode tensorcore.Mode) (tensorcore.Shape, error) {
	pc, err := cfg.TensorCore.Get(prec)
	if err != nil {
		return tensorcore.Shape{}, err
	}
	p := &kernel.Plan{Shape: kernel.Shape{Precision: prec, Sparse: mode == tensorcore.Sparse}}
	if err := p.SetInstruction(pc, p.Shape); err != nil {
		return tensorcore.Shape{}, err
	}
	return p.Inst, nil
}

// PowerPoint is one line of the power microbenchmark: a kernel's average
// board power at gpu.clock_mhz, and the clock and power it would have
// under power_capped.
type PowerPoint struct {
	Kernel    string           `json:"kernel"`
	ClockMHz  int              `json:"clock_mhz"`
	PowerW    float64          `json:"power_w"`
	Energy    energy.Breakdown `json:"energy_uj"`
	CycleTime float64          `json:"time_us"`
	// CappedMHz and CappedW: the highest clock of the V/f table within
	// power.limit_w, and the power there.
	CappedMHz int     `json:"capped_clock_mhz"`
	CappedW   float64 `json:"capped_power_w"`
}

// MicroPower runs the power microbenchmark: a tensor-core-bound kernel
// (stcsim micro tc's throughput run: every tensor core busy with
// independent fp16 MMAs on register operands), dense and sparse; the DRAM
// bandwidth benchmark's streaming kernel; and the idle board.
func MicroPower(cfg *configs.Config) ([]PowerPoint, error) {
	var out []PowerPoint
	for _, m := range []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse} {
		n, cycles, err := tcBoundCounts(cfg, tensorcore.FP16, m)
		if err != nil {
			return nil, err
		}
		out = append(out, powerPoint(cfg, fmt.Sprintf("tc-%s-fp16", m), n, cycles))
	}
	n, cycles, err := streamCounts(cfg)
	if err != nil {
		return nil, err
	}
	out = append(out, powerPoint(cfg, "dram-stream", n, cycles))
	idle := energy.Counts{Precision: tensorcore.FP16, SMs: cfg.GPU.SMCount}
	out = append(out, powerPoint(cfg, "idle", idle, uint64(cfg.GPU.ClockMHz)*1000))
	return out, nil
}

// powerPoint evaluates counts measured over cycles at gpu.clock_mhz. The
// kernels here keep their cycle count at any clock (no memory latency in
// the tensor-core run; the streaming run is scaled), so the capped clock
// is found on the same counts.
func powerPoint(cfg *configs.Config, name string, n energy.Counts, cycles uint64) PowerPoint {
	pw := cfg.Power
	f0 := cfg.GPU.ClockMHz
	b, _ := pw.Energy(n, cycles, f0)
	p := PowerPoint{Kernel: name, ClockMHz: f0, Energy: b,
		PowerW: energy.Power(b.Total(), cycles, f0), CycleTime: float64(cycles) / float64(f0)}
	clocks := pw.Clocks(f0)
	at := func(mhz int) uint64 { return cycles }
	if name == "dram-stream" { // DRAM-bound: the time stays, the cycles follow the clock
		at = func(mhz int) uint64 { return cycles * uint64(mhz) / uint64(f0) }
	}
	for _, f := range clocks {
		c := at(f)
		cb, _ := pw.Energy(n, c, f)
		p.CappedMHz, p.CappedW = f, energy.Power(cb.Total(), c, f)
		if p.CappedW <= pw.LimitW {
			break
		}
	}
	return p
}

// tcBoundCounts runs the tensor-core throughput microbenchmark and counts
// its events: the MMAs, their register-file operands and their issue.
func tcBoundCounts(cfg *configs.Config, prec tensorcore.Precision, m tensorcore.Mode) (energy.Counts, uint64, error) {
	r, err := unit.MicroTC(cfg.TensorCore, cfg.GPU.SMCount,
		cfg.SM.SubPartitions, cfg.GPU.ClockMHz, prec, m)
	if err != nil {
		return energy.Counts{}, 0, err
	}
	p, _ := cfg.TensorCore.Get(prec)
	sh, err := tensorcore.ParseShape(p.DenseShape)
	if err != nil {
		return energy.Counts{}, 0, err
	}
	kept := tensorcore.DensePattern
	if m == tensorcore.Sparse {
		kept = p.Pattern()
		if sh, err = kept.SparseShape(sh); err != nil {
			return energy.Counts{}, 0, err
		}
	}
	mmas := uint64(r.MMAsPerTC * r.TensorCores)
	fmas := mmas * uint64(sh.M*sh.N*kept.Kept(sh.K))
	read, write := energy.MMARegisterBytes(sh.M, sh.N, sh.K, kept.Kept(sh.K),
		prec.ElementBytes(), m == tensorcore.Sparse)
	n := energy.Counts{Precision: prec, SMs: cfg.GPU.SMCount,
		SM: energy.SMActivity{Instructions: mmas, RFReadBytes: mmas * read,
			RFWriteBytes: mmas * write}}
	if m == tensorcore.Sparse {
		n.SparseMMAs, n.SparseFMAs = mmas, fmas
	} else {
		n.DenseMMAs, n.DenseFMAs = mmas, fmas
	}
	return n, r.ThroughputCycles, nil
}

// streamCounts runs the DRAM streaming kernel and counts its events: its
// L2 sectors, crossbar and DRAM bytes, and one 16-B-per-thread load
// instruction per 512 B, each writing its bytes into registers.
func streamCounts(cfg *configs.Config) (energy.Counts, uint64, error) {
	cycles, st, err := memory.StreamDRAM(cfg.Memory, clock.MHz(cfg.GPU.ClockMHz),
		cfg.GPU.SMCount)
	if err != nil {
		return energy.Counts{}, 0, err
	}
	loads := st.L2Bytes / 512
	return energy.Counts{Precision: tensorcore.FP16, SMs: cfg.GPU.SMCount,
		SM:        energy.SMActivity{Instructions: loads, RFWriteBytes: st.L2Bytes},
		L1Sectors: st.L1HitSectors + st.L1MissSectors,
		L2Sectors: st.L2HitSectors + st.L2MissSectors, CrossbarBytes: st.L2Bytes,
		DRAMBytes: st.DRAMReadBytes + st.DRAMWriteBytes}, cycles, nil
}
