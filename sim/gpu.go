package sim

import (
	"fmt"
	"sync/atomic"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/tensorcore"
)

// simulations counts GPUs built in this process (trace task ids).
var simulations atomic.Uint64

// gpu is one simulated GPU running one kernel: SMs with their
// sub-partitions' tensor cores and shared memory, the CTA scheduler, and
// the memory hierarchy, all on one Akita serial engine.
type gpu struct {
	cfg    *configs.Config
	engine akita.Engine
	clk    clock.Clock
	mem    memory.Hierarchy
	sms    []*smUnit
	plan   *kernelPlan

	nextCTA     int
	doneCTAs    int
	launchLimit int          // CTAs launched: all, or the extrapolation window
	waves       *waveTracker // nil unless extrapolating
	serial      uint64       // distinguishes simulations in traces
	endCycle    uint64
	startedAt   uint64
	acct        timeAccount
	cal         calendar
	disp        *dispatcher
	onStart     func(idx int, now uint64) // observes CTA starts (tests)
	issued      uint64                    // warp instructions issued (instruction-level SM)
	issuedOp    [numOpcodes]uint64        // the same by opcode class
	rfRead      uint64                    // register-file bytes read (instruction-level SM)
	rfWrite     uint64                    // register-file bytes written
	// jitter perturbs CTA dispatch and same-cycle tie order in an
	// ensemble run (nil: the unperturbed model; see jitter.go).
	jitter *jitter
}

// buildGPU makes the GPU of a config for one kernel plan. One
// parameterised builder serves every config.
func buildGPU(cfg *configs.Config, plan *kernelPlan) (*gpu, error) {
	g := &gpu{cfg: cfg, engine: akita.NewSerialEngine(),
		clk: clock.MHz(cfg.GPU.ClockMHz), plan: plan}
	mem, err := memory.MakeBuilder().WithEngine(g.engine).
		WithFreq(g.clk.Freq).WithConfig(cfg.Memory).
		WithNumSMs(cfg.GPU.SMCount).
		WithGranularity(cfg.Sim.MemoryGranularity).Build("Memory")
	if err != nil {
		return nil, fmt.Errorf("build memory hierarchy: %w", err)
	}
	g.mem = mem
	g.cal.evAt = never
	g.disp = newDispatcher(cfg.SM.CTADispatchInterval, cfg.GPU.SMCount)
	g.startedAt = uint64(cfg.SM.KernelLaunchLatency)
	g.acct.init(cfg.GPU.SMCount*cfg.SM.SubPartitions, g.startedAt)
	for i := 0; i < cfg.GPU.SMCount; i++ {
		g.sms = append(g.sms, g.buildSM(i))
	}
	g.launchLimit = plan.ctas
	g.serial = simulations.Add(1)
	if cfg.Sim.ExtrapolateWaves {
		g.waves = newWaveTracker(g)
	}
	return g, nil
}

func (g *gpu) buildSM(id int) *smUnit {
	name := akita.BuildNameWithIndex("GPU", "SM", id)
	sm := &smUnit{gpu: g, id: id,
		ComponentBase: akita.NewComponentBase(name),
		smem:          memory.NewSharedMemory(g.cfg.Memory.SharedMemory),
		fill:          memory.FillPattern(g.cfg.Memory.SharedMemory)}
	sm.cb = clock.Callbacks{Engine: g.engine, Clock: g.clk}
	sm.patterns()
	for p := 0; p < g.cfg.SM.SubPartitions; p++ {
		tc := tensorcore.MakeBuilder().
			WithEngine(g.engine).
			WithFreq(g.clk.Freq).
			WithConfig(g.cfg.TensorCore).
			Build(akita.BuildNameWithIndex(name, "TC", p))
		sm.tcs = append(sm.tcs, tc)
	}
	for p := 0; p < g.cfg.SM.SubPartitions; p++ {
		sm.sps = append(sm.sps, newSubPartition(sm, p))
	}
	return sm
}

// run launches the kernel and runs the engine to completion.
func (g *gpu) run() error {
	for slot := 0; slot < g.plan.occupancy; slot++ {
		for _, sm := range g.sms {
			if g.nextCTA >= g.launchLimit {
				break
			}
			g.dispatchAt(sm, g.startedAt, 0)
		}
	}
	if err := g.engine.Run(); err != nil {
		return err
	}
	if g.doneCTAs != g.launchLimit {
		return fmt.Errorf("kernel %s: %d of %d CTAs finished: the model "+
			"deadlocked", g.plan.name(), g.doneCTAs, g.launchLimit)
	}
	return nil
}

// ctaFinished frees the CTA's slot and launches the next CTA there.
func (g *gpu) ctaFinished(c *cta, at uint64) {
	g.doneCTAs++
	c.sm.lastFinish = max(c.sm.lastFinish, at)
	g.endCycle = max(g.endCycle, at)
	if g.waves != nil {
		g.waves.finished(g, c.idx, at)
	}
	if g.nextCTA < g.launchLimit {
		g.dispatchAt(c.sm, at, uint64(g.cfg.SM.CTALaunchLatency))
	}
}

// memoryReason classifies a tile load by its latency: one that took at
// least the DRAM load-to-use latency waited on DRAM, otherwise on L2.
func (g *gpu) memoryReason(issued, landed uint64) reason {
	if landed-issued >= uint64(g.cfg.Memory.DRAM.Latency) {
		return whyDRAM
	}
	return whyL2
}

// stageCause classifies an LDGSTS chunk's read by its time: L2 or DRAM
// as memoryReason does, and the share of the time beyond the level's
// unloaded latency (queueing: bandwidth) — the DRAM latency, or the far
// L2 hit latency (so a near hit's queueing of up to the difference reads
// as latency).
func (g *gpu) stageCause(issued, landed uint64) (reason, float64) {
	why := g.memoryReason(issued, landed)
	floor := uint64(g.cfg.Memory.L2.FarLatency)
	if why == whyDRAM {
		floor = uint64(g.cfg.Memory.DRAM.Latency)
	}
	took := landed - issued
	if took <= floor {
		return why, 0
	}
	return why, float64(took-floor) / float64(took)
}

// issueInterval is the cycles between MMAs of the plan's mode on one
// tensor core.
func (g *gpu) issueInterval(p *kernelPlan) int { return p.dp.Interval }
