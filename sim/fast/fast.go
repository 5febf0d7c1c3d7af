package fast

import (
	"fmt"
	"math"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// Time times plan p analytically. Per CTA, a k-step takes the longest
// of its tensor-core time, its shared-memory (ldmatrix and fill
// wavefronts) time, its SM's crossbar port time, and its share of L2
// bandwidth at the concurrency of its wave; a wave adds its first
// CTA's prologue, the stagger of the SM's other CTAs and its last
// CTA's epilogue, the write of D into L2 (wave). The kernel takes the
// longest of its waves' chain, its DRAM traffic (the operands' unique
// bytes and the dirty lines of D that the L2 evicts, l2.go) and its L2
// slices' work, each streamed between the first prologue and the last
// epilogue, plus its launch and, for split-K, the reduction pass.
//
// The result fills Plan, Cycles, Waves, TCUnits and ClockMHz, and of
// the activity counts only the precision and the SMs powered (so the
// energy model gives the static energy). It does not fill the
// breakdown, the tensor-core account, memory statistics, shared-memory
// bytes or the event counts (left zero), nor does it apply a
// power-capped clock: it runs at gpu.clock_mhz. It refuses (an error)
// what it does not model: K samples, serial split-K and stream-K
// schedules, dual-side sparse, an L2 warm from the previous call.
func Time(cfg *configs.Config, p *kernel.Plan) (*gpu.Result, error) {
	if p.KSampled {
		return nil, fmt.Errorf("fast tier: plan %s is a K sample, not a kernel", p.Name())
	}
	if p.Schedule != kernel.DataParallel && p.Schedule != kernel.ParallelSplitK && p.Schedule != kernel.GEMV {
		return nil, fmt.Errorf("fast tier: plan %s: the %s schedule is not modelled here",
			p.Name(), p.Schedule)
	}
	if cfg.Kernel.L2Start == configs.L2Repeat {
		return nil, fmt.Errorf("fast tier: plan %s: an L2 warm from the previous call (kernel.l2_start=%s) is not modelled here",
			p.Name(), configs.L2Repeat)
	}
	if p.Format.Family() == tensorcore.FamilyVNM {
		return nil, fmt.Errorf("fast tier: plan %s: the V:N:M gather kernel (sparsity %s) is not held to the instruction tier",
			p.Name(), p.Format)
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
	for range full {
		m.wave(p.Occupancy, perWave)
	}
	waves := full
	if tail > 0 {
		m.wave(kernel.CeilDiv(tail, sms), tail)
		waves++
	}
	m.chain += m.drain // the last wave's stores wait for it
	cycles := float64(cfg.SM.KernelLaunchLatency) + max(m.chain, m.streamed(), m.sliced())

	if p.SplitK > 1 {
		cycles += m.reduction()
	}
	return &gpu.Result{Plan: p, Cycles: uint64(cycles + 0.5), Waves: waves,
		TCUnits:  sms * cfg.SM.SubPartitions,
		ClockMHz: cfg.GPU.ClockMHz, Fidelity: configs.FidelityFast,
		Act: energy.Counts{Precision: p.Shape.Precision, SMs: sms}}, nil
}

// model holds one plan's per-CTA, per-k-step costs, read from its
// demand model (sim/demand, which the pre-model reads too), and the L2's
// state between waves.
type model struct {
	cfg    *configs.Config
	p      *kernel.Plan
	d      demand.Demand
	l2Step float64 // L2 bytes of one CTA's k-step: its stage
	l2BW   float64 // bytes per cycle, all slices
	port   float64 // bytes per cycle of one SM's crossbar port
	l2     l2State
	// The kernel so far: its waves' chain of cycles, their DRAM bytes,
	// their slice work (in read bytes), and the last wave's fill,
	// epilogue and the dirty lines it evicted.
	chain, dram, l2Work             float64
	fill, lastEpilogue, lastVictims float64
	dramWrites                      float64 // the dirty lines of dram
	// drain is how long the last wave's stores waited, after its staged
	// epilogue, for the victims beyond the write-back queues to reach
	// DRAM: the next wave's fill and k-steps overlap it.
	drain float64
}

func newModel(cfg *configs.Config, p *kernel.Plan) *model {
	d := demand.Of(cfg, p)
	step := d.Stage.Bytes()
	if p.Schedule == kernel.GEMV {
		// The GEMV loads B (the tokens) through L1: the CTAs sharing an
		// SM read the same vectors, which L2 serves to the SM once.
		step = float64(d.Stage.A) + float64(d.Stage.B)/float64(p.Occupancy)
	}
	return &model{cfg: cfg, p: p, d: d,
		l2Step: step,
		l2BW:   float64(cfg.Memory.L2.BytesPerClk) * cfg.Memory.L2.Efficiency,
		port:   float64(cfg.Memory.Crossbar.PortBytesPerClk),
		l2:     newL2State(cfg),
	}
}

// kStep is a k-step's cycles with perSM CTAs on each SM and all CTAs
// running GPU-wide, DRAM aside: the SM's tensor cores (a GEMV's FP32
// pipes), shared memory and crossbar port, and the L2 slices.
func (m *model) kStep(perSM, all int) float64 {
	c, a := float64(perSM), float64(all)
	return max(c*m.d.TCCycles, c*m.d.BankCycles, c*m.d.FMACycles, c*m.l2Step/m.port, a*m.l2Step/m.l2BW,
		m.gemvTrip())
}

// gemvTrip is the shortest k-step of a GEMV (0 for a tile plan): a
// warp issues a k-step's loads only after the previous k-step's math
// (no cp.async stages), so each k-step waits a DRAM miss and then its
// warp's FP32-pipe instructions.
func (m *model) gemvTrip() float64 {
	if m.p.Schedule != kernel.GEMV {
		return 0
	}
	perWarp := float64(m.p.FMAPerKStep()*kernel.FMAInterval(m.cfg)) / float64(m.p.Warps)
	return m.miss() + perWarp
}

// miss is a DRAM miss's round trip from a far slice (dram.latency is
// the round trip from an average slice, l2.near_latency and
// l2.far_latency apart).
func (m *model) miss() float64 {
	l2 := m.cfg.Memory.L2
	return float64(m.cfg.Memory.DRAM.Latency) + float64(l2.FarLatency-l2.NearLatency)/2
}

// wave adds one wave to the kernel: to the chain, its first CTA's
// prologue, the stagger of the SM's other CTAs (the port serves each
// CTA's prologue loads before the next one's), the k-steps of the CTAs
// sharing the SM (or, if longer, the previous wave's drain), and the
// last CTA's epilogue (the others' overlap its k-steps); to the DRAM
// traffic, its operands' fills and the dirty
// lines of D they and its epilogue evict; to the slices' work, its
// loads and stores.
func (m *model) wave(perSM, all int) {
	m.fill = m.prologue()
	operands := float64(all) * m.d.MeanKSteps * m.d.OperandBytesPerKStep()
	victims := m.l2.allocate(operands, false)
	m.dram += operands + victims
	m.dramWrites += victims
	m.l2Work += float64(all) * m.d.MeanKSteps * m.l2Step
	stagger := float64(perSM-1) * m.prologueStages() * m.l2Step / m.port
	body := m.fill + stagger + m.d.MeanKSteps*m.kStep(perSM, all)
	m.chain += max(body, m.drain) + m.epilogue(all)
}

// prologueStages is the stages a CTA's prologue loads before its
// first k-step: stages - 1, or all of its k-steps if fewer.
func (m *model) prologueStages() float64 {
	return min(float64(max(1, m.p.Tile.Stages-1)), math.Ceil(m.d.MeanKSteps))
}

// prologue is the cycles from a CTA's launch to its first MMA's
// result: its first stage's fills through the SM's crossbar port, on a
// DRAM miss to a far slice (dram.latency is the round trip from an
// average slice, l2.near_latency and l2.far_latency apart), then the
// MMA latency.
func (m *model) prologue() float64 {
	cfg := m.cfg
	return float64(cfg.SM.CTALaunchLatency) + m.l2Step/m.port + m.miss() +
		float64(m.p.Datapath.Latency)
}

// streamed is the kernel's time when DRAM is what bounds it: SMs that
// wait on DRAM drift apart, so one wave's fills and epilogues overlap
// another's loads, and DRAM streams from the first fill to the last
// epilogue. Only the last epilogue's victims that the write-back queues
// hold may still be on their way when the kernel ends (the flush after
// it writes them).
func (m *model) streamed() float64 {
	late := min(m.lastVictims, m.l2.queue)
	return m.fill + m.dramCost(m.dram-m.dramWrites, m.dramWrites-late)/m.d.DRAMBytesPerClk + m.lastEpilogue
}

// dramCost is the channels' time for reads and writes, in read bytes,
// as the instruction tier's DRAM bus charges it (memory.dramBus): a
// written byte at dram.efficiency / dram.write_efficiency of a read's,
// and, when reads and writes mix, two turns of the bus per write batch
// on every channel.
func (m *model) dramCost(reads, writes float64) float64 {
	d := m.cfg.Memory.DRAM
	cost := reads + writes*d.Efficiency/d.WriteEfficiency
	if reads > 0 && writes > 0 {
		cost += writes / float64(d.WriteBatchBytes) * 2 * d.TurnaroundNs *
			d.BandwidthGBps * d.Efficiency / float64(d.Channels) // ns x GB/s = B
	}
	return cost
}

// sliced is the kernel's time when the L2 slices are what bounds it,
// as streamed for DRAM: every read byte and every written byte at
// 1/l2.write_ratio of a read's slot, from the first fill to the last
// epilogue.
func (m *model) sliced() float64 {
	return m.fill + m.l2Work/m.l2BW + m.lastEpilogue
}

// epilogue is the write of a wave's D (FP32 partials under split-K)
// into L2, as the instruction tier's stores go: a CTA's tile staged and
// stored through its SM's crossbar port, then the last store's one-way
// latency (its acceptance ends the CTA). The slices' time for the
// writes (sliced) and the dirty lines they evict (streamed) are the
// kernel's throughput, not the wave's latency: the SMs' epilogues do
// not coincide; but once the write-back queues are full, the stores wait
// for the victims beyond them to reach DRAM (drain, less the staging).
func (m *model) epilogue(all int) float64 {
	l2 := m.cfg.Memory.L2
	bytes := float64(all) * m.d.EpilogueBytes
	m.l2Work += bytes / l2.WriteRatio
	m.lastVictims = m.l2.allocate(bytes, true)
	m.dram += m.lastVictims
	m.dramWrites += m.lastVictims
	staged := m.staged()
	m.lastEpilogue = staged + float64(l2.FarLatency)/2
	m.drain = max(0, m.dramCost(0, max(0, m.lastVictims-m.l2.queue))/m.d.DRAMBytesPerClk-staged)
	return m.lastEpilogue
}

// staged is the epilogue's stores as CUTLASS's default epilogue issues
// them (kernel.storeTile): per kernel.EpiloguePassRows rows of the warp
// tile, a barrier, the accumulators staged through shared memory in FP32
// (a store and a load of every accumulator byte, a barrier between, the
// load's latency) and then stored through the crossbar port, the next
// pass staged while the last one's stores drain: a two-stage pipeline
// over the passes.
func (m *model) staged() float64 {
	cfg := m.cfg
	sh := cfg.Memory.SharedMemory
	blocks := float64(max(1, m.p.Tile.WarpM/kernel.EpiloguePassRows))
	acc := m.d.AccTileBytes
	smem := 2*acc/float64(sh.BytesPerClk)/blocks +
		float64(2*cfg.SM.BarrierLatency+sh.Latency)
	port := m.d.EpilogueBytes / m.port / blocks
	return smem + port + (blocks-1)*max(smem, port)
}

// reduction is the split-K pass as the instruction tier runs it: a
// launch, then each SM in turn takes output tiles, reads every split's
// FP32 partials (through its port, an L2 round trip) and writes the
// tile of D; no faster than all of it through the slices, nor than its
// DRAM traffic (partials the L2 no longer holds).
func (m *model) reduction() float64 {
	cfg, p := m.cfg, m.p
	l2 := cfg.Memory.L2
	tiles, partial, out := m.d.Tiles, m.d.AccTileBytes, m.d.DTileBytes
	perTile := float64(p.SplitK)*partial/m.port + float64(l2.FarLatency) +
		out/m.port + float64(l2.FarLatency)/2
	rounds := float64(kernel.CeilDiv(tiles, cfg.GPU.SMCount))
	reads := float64(tiles*p.SplitK) * partial // whole tiles, as perTile and writes
	writes := float64(tiles) * out
	slices := reads/m.l2BW + writes/(m.l2BW*l2.WriteRatio)
	dram := m.l2.spilled(reads) / m.d.DRAMBytesPerClk
	return float64(cfg.SM.KernelLaunchLatency) + max(rounds*perTile, slices, dram)
}

// StatedErrorPctFor is the error a fast record of plan p carries: the
// GEMV's own measurement for the CUDA-core GEMV, else StatedErrorPct.
func StatedErrorPctFor(p *kernel.Plan) float64 {
	if p.Schedule == kernel.GEMV {
		return gemvError.worstPct
	}
	return StatedErrorPct()
}
