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
	filler *memory.Filler // cp.async fills into shared memory
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
	issued      uint64 // warp instructions issued (instruction-level SM)
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
	g.filler = memory.NewFiller(cfg.Memory)
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
		smem:          memory.NewSharedMemory(g.cfg.Memory.SharedMemory)}
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
			sm.launchAt(g.startedAt+g.jitter.dispatchOffset(), g.nextCTA)
			g.nextCTA++
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
	g.endCycle = max(g.endCycle, at)
	if g.waves != nil {
		g.waves.finished(g, c.idx, at)
	}
	if g.nextCTA < g.launchLimit {
		c.sm.launchAt(at+uint64(g.cfg.SM.CTALaunchLatency)+
			g.jitter.dispatchOffset(), g.nextCTA)
		g.nextCTA++
	}
}

// memoryReason maps what a stage's fill was bound by to the breakdown's
// reasons: DRAM latency and bandwidth to dram, L2 and crossbar to l2, the
// bank array's write queue to smem.
func memoryReason(c memory.Cause) reason {
	switch {
	case c == memory.CauseSmem:
		return whySmem
	case c.IsDRAM():
		return whyDRAM
	}
	return whyL2
}

// issueInterval is the cycles between MMAs of the plan's mode on one
// tensor core.
func (g *gpu) issueInterval(p *kernelPlan) int { return p.dp.Interval }
