package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// LaunchResult is the small-kernel launch microbenchmark: the time per
// call of a loop of back-to-back launches of a tiny streaming kernel on
// one stream, as RRZE-HPC gpu-benches gpu-small-kernels times it
// (10 000 calls of A[i] = B[i] * 0.25 between two host timers), where a
// call costs the gap between the previous kernel's last CTA finishing and
// this kernel's first CTA starting (sm.kernel_launch_latency) plus the
// kernel itself.
type LaunchResult struct {
	// Elements is the doubles each call reads and writes; Threads the
	// threads per CTA; CTAs the CTAs that do work.
	Elements int `json:"elements"`
	Threads  int `json:"threads"`
	CTAs     int `json:"ctas"`
	// GapCycles is sm.kernel_launch_latency; KernelCycles the kernel's
	// own cycles from its first CTA's start to its last store's
	// acknowledgement (the instruction-level SM and memory hierarchy).
	GapCycles    uint64 `json:"gap_cycles"`
	KernelCycles uint64 `json:"kernel_cycles"`
	// PerCallUS is (GapCycles + KernelCycles) at gpu.clock_mhz: the time
	// per call of the loop, each call starting when the previous one's
	// last CTA is done (no programmatic dependent launch on the A100).
	PerCallUS float64 `json:"per_call_us"`
}

// doubleBytes is the size of the kernel's elements (doubles).
const doubleBytes = 8

// MicroLaunch runs one call of gpu-small-kernels' scale kernel on the
// instruction-level GPU: elements doubles (an even count) in CTAs of
// threads threads (a multiple of 32), elements / threads + 1 CTAs as the
// benchmark launches them (the threads past the end return at once: their
// warps load and store nothing). Each warp loads its 32 doubles (LDG,
// 256 B), multiplies them (one instruction on the FP32 pipe, where the
// benchmark's DMUL runs on the FP64 units) and stores them (STG) back over
// the same bytes (the benchmark writes a second buffer; both stay in the
// L2), the data in the L2 as the previous call left them
// (kernel.l2_start=repeat). The call's time adds the launch gap the loop
// pays before it.
func MicroLaunch(cfg *configs.Config, elements, threads int) (LaunchResult, error) {
	if elements <= 0 || elements%2 != 0 {
		return LaunchResult{}, fmt.Errorf("launch microbenchmark: %d elements is not a positive even count",
			elements)
	}
	if threads < 32 || threads > 1024 || threads%32 != 0 {
		return LaunchResult{}, fmt.Errorf("launch microbenchmark: %d threads per CTA is not a multiple of 32 in 32..1024",
			threads)
	}
	c := *cfg
	c.Sim.ExtrapolateWaves = false
	c.Sim.FastForward = false
	c.Kernel.L2Start = configs.L2Repeat
	p, err := scalePlan(&c, elements, threads)
	if err != nil {
		return LaunchResult{}, err
	}
	g, err := gpu.Build(&c, p)
	if err != nil {
		return LaunchResult{}, fmt.Errorf("launch microbenchmark: %w", err)
	}
	if err := g.Run(); err != nil {
		return LaunchResult{}, fmt.Errorf("launch microbenchmark: %w", err)
	}
	gap := uint64(c.SM.KernelLaunchLatency)
	r := LaunchResult{Elements: elements, Threads: threads, CTAs: p.CTAs,
		GapCycles: gap, KernelCycles: g.EndCycle - gap}
	r.PerCallUS = float64(g.EndCycle) / float64(c.GPU.ClockMHz)
	return r, nil
}

// scalePlan lays the kernel's doubles out as the epilogue's output, so
// that the SM's LDG and STG address them: rows of two doubles (16 B),
// a warp's m16 block of 16 rows is its 32 threads' 256 B, and a CTA's
// warps stack along M.
func scalePlan(cfg *configs.Config, elements, threads int) (*kernel.Plan, error) {
	warps := threads / 32
	rows := elements / 2
	ctas := elements/threads + 1
	// As many CTAs per SM as its thread, warp and CTA slots hold (the
	// kernel's few registers and no shared memory bind nothing else).
	occ := max(1, min(cfg.SM.MaxThreads/threads, cfg.SM.MaxWarps/warps, cfg.SM.MaxCTAs))
	p := &kernel.Plan{Shape: kernel.Shape{M: rows, N: 2, K: 1, Batch: 1,
		Precision: tensorcore.FP16},
		Tile:  configs.TileConfig{BM: 16 * warps, BN: 2, BK: 16, WarpM: 16, WarpN: 2, Stages: 2},
		Warps: warps, CTAs: ctas, Occupancy: occ,
		TilesM: ctas, TilesN: 1, Swizzle: 1, OutBytes: doubleBytes}
	pc, err := cfg.TensorCore.Get(tensorcore.FP16)
	if err != nil {
		return nil, err
	}
	if err := p.SetInstruction(pc, p.Shape); err != nil {
		return nil, err
	}
	val := isa.RegSpan{First: 0, N: 2}
	prog := &isa.Program{Regs: 4, Prologue: []isa.Instr{
		{Op: isa.OpLDG, Dst: val, Space: isa.SpaceD, Bytes: 32 * doubleBytes},
		{Op: isa.OpFMA, Dst: val, Src: [4]isa.RegSpan{val}},
		{Op: isa.OpSTG, Src: [4]isa.RegSpan{val}, Space: isa.SpaceD, Bytes: 32 * doubleBytes},
		{Op: isa.OpEXIT},
	}}
	p.Programs = make([]*isa.Program, warps)
	for w := range p.Programs {
		p.Programs[w] = prog
	}
	return p, nil
}
