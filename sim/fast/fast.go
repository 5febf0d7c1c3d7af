package fast

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
)

// Time times plan p analytically. Per CTA, a k-step takes the longest
// of its tensor-core time, its shared-memory (ldmatrix and fill
// wavefronts) time, and its share of L2 and DRAM bandwidth at the
// concurrency of its wave; a wave adds its pipeline fill and epilogue,
// and the kernel its launch and, for split-K, the reduction pass.
//
// The result fills Plan, Cycles, Waves, TCUnits and ClockMHz, and of
// the activity counts only the precision and the SMs powered (so the
// energy model gives the static energy). It does not fill the
// breakdown, the tensor-core account, memory statistics, shared-memory
// bytes or the event counts (left zero), nor does it apply a
// power-capped clock: it runs at gpu.clock_mhz. It refuses (an error)
// what it does not model: K samples, serial split-K and stream-K
// schedules, dual-side sparse.
func Time(cfg *configs.Config, p *kernel.Plan) (*gpu.Result, error) {
	if p.KSampled {
		return nil, fmt.Errorf("fast tier: plan %s is a K sample, not a kernel", p.Name())
	}
	if p.Schedule != kernel.DataParallel && p.Schedule != kernel.ParallelSplitK {
		return nil, fmt.Errorf("fast tier: plan %s: the %s schedule is not modelled here",
			p.Name(), p.Schedule)
	}
	if p.Shape.Dual {
		return nil, fmt.Errorf("fast tier: plan %s: dual-side sparse is not held to the instruction tier",
			p.Name())
	}
	if p.CTAs <= 0 || p.Occupancy <= 0 {
		return nil, fmt.Errorf("fast tier: plan %s has %d CTAs at %d per SM",
			p.Name(), p.CTAs, p.Occupancy)
	}
	m := newModel(cfg, p)
	sms := cfg.GPU.SMCount
	perWave := sms * p.Occupancy
	full, tail := p.CTAs/perWave, p.CTAs%perWave
	cycles := float64(cfg.SM.KernelLaunchLatency)
	cycles += float64(full) * m.wave(p.Occupancy, perWave)
	waves := full
	if tail > 0 {
		cycles += m.wave(kernel.CeilDiv(tail, sms), tail)
		waves++
	}
	if p.SplitK > 1 {
		cycles += m.reduction()
	}
	return &gpu.Result{Plan: p, Cycles: uint64(cycles + 0.5), Waves: waves,
		TCUnits:  sms * cfg.SM.SubPartitions,
		ClockMHz: cfg.GPU.ClockMHz, Fidelity: configs.FidelityFast,
		Act: energy.Counts{Precision: p.Shape.Precision, SMs: sms}}, nil
}

// model holds one plan's per-CTA, per-k-step costs.
type model struct {
	cfg      *configs.Config
	p        *kernel.Plan
	tc       float64 // tensor-core cycles of one CTA's k-step on its SM
	smem     float64 // shared-memory cycles of one CTA's k-step
	l2Step   float64 // L2 bytes of one CTA's k-step
	dramStep float64 // DRAM bytes of one CTA's k-step (unique operand traffic)
	l2BW     float64 // bytes per cycle
	dramBW   float64
	kSteps   float64 // mean k-steps of a CTA
}

func newModel(cfg *configs.Config, p *kernel.Plan) *model {
	sh := cfg.Memory.SharedMemory
	wavefronts := p.Warps*(p.LDSM.Wavefronts+p.MetaLDSM.Wavefronts) + p.FillWaves
	g := p.Shape
	operands := float64(g.Batch) * (float64(g.M*p.PaddedK*p.Pattern.N/
		p.Pattern.M*p.ElemBytes) + float64(g.N*p.PaddedK*p.ElemBytes))
	d := cfg.Memory.DRAM
	return &model{cfg: cfg, p: p,
		tc: float64(p.Warps*p.Groups*p.MMAPerGroup*p.Datapath.Interval) /
			float64(cfg.SM.SubPartitions),
		smem:     float64(wavefronts*sh.Banks*sh.BankBytes) / float64(sh.BytesPerClk),
		l2Step:   float64(p.AStageB + p.MetaStageB + p.BStageB),
		dramStep: operands / float64(p.TotalKSteps()),
		l2BW:     float64(cfg.Memory.L2.BytesPerClk) * cfg.Memory.L2.Efficiency,
		dramBW:   d.BandwidthGBps * d.Efficiency * 1e9 / (float64(cfg.GPU.ClockMHz) * 1e6),
		kSteps:   float64(p.TotalKSteps()) / float64(p.CTAs),
	}
}

// kStep is a k-step's cycles with perSM CTAs on each SM and all CTAs
// running GPU-wide.
func (m *model) kStep(perSM, all int) float64 {
	c, a := float64(perSM), float64(all)
	return max(c*m.tc, c*m.smem, a*m.l2Step/m.l2BW, a*m.dramStep/m.dramBW)
}

// wave is the cycles of one wave: its CTAs' k-steps after the pipeline
// fill (one DRAM and L2 round trip, then the MMA latency to drain), and
// the epilogue's write of D.
func (m *model) wave(perSM, all int) float64 {
	cfg, p := m.cfg, m.p
	fill := float64(cfg.SM.CTALaunchLatency + cfg.Memory.DRAM.Latency +
		cfg.Memory.L2.FarLatency + p.Datapath.Latency)
	out := p.OutBytes
	if p.SplitK > 1 {
		out = kernel.AccumulatorBytes
	}
	epilogue := float64(all*p.Tile.BM*p.Tile.BN*out) / m.dramBW
	return fill + m.kSteps*m.kStep(perSM, all) + epilogue
}

// reduction is the split-K pass: a launch, then reading every split's
// partial sums and writing D, at DRAM bandwidth.
func (m *model) reduction() float64 {
	g, p := m.p.Shape, m.p
	bytes := g.Batch * g.M * g.N * (p.SplitK*kernel.AccumulatorBytes + p.OutBytes)
	return float64(m.cfg.SM.KernelLaunchLatency) + float64(bytes)/m.dramBW
}
