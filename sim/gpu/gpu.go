package gpu

import (
	"fmt"
	"sync/atomic"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/internal/engine"
	"github.com/stcsim/stcsim/internal/tally"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/sm"
)

// simulations counts GPUs built in this process (trace task ids).
var simulations atomic.Uint64

// GPU is one simulated GPU running one kernel: SMs with their
// sub-partitions' tensor cores and shared memory, the CTA scheduler, and
// the memory hierarchy, all on one serial engine (internal/engine: Akita's
// SerialEngine's event order, at less cost per event).
type GPU struct {
	cfg    *configs.Config
	engine *engine.Serial
	prune  *pruner // stops a losing selection sample (nil: runs to the end)
	clk    clock.Clock
	mem    memory.Hierarchy
	filler *memory.Filler // cp.async fills into shared memory
	sms    []*sm.SM
	plan   *kernel.Plan

	nextCTA     int
	doneCTAs    int
	launchLimit int          // CTAs launched: all, or the extrapolation window
	waves       *waveTracker // nil unless extrapolating
	ff          *fastForward // nil unless fast-forwarding (fastforward.go)
	serial      uint64       // distinguishes simulations in traces
	EndCycle    uint64
	startedAt   uint64
	sm.Counters // what the SMs count (issued instructions, register-file bytes, the tensor cores' time)
	cal         sm.Calendar
	disp        *dispatcher
	onStart     func(idx int, now uint64) // observes CTA starts (tests)
	env         *sm.Env                   // what the SMs see of the GPU
	// jitter perturbs CTA dispatch and same-cycle tie order in an
	// ensemble run (nil: the unperturbed model; see jitter.go).
	jitter *jitter
	// trackFill: extrapolate over waves after the output fills the L2
	// (trackedWavesFor), for a run simulated again (writeBackUnseen).
	trackFill bool
}

// Build makes the GPU of a config for one kernel plan. One
// parameterised builder serves every config.
func Build(cfg *configs.Config, plan *kernel.Plan) (*GPU, error) {
	return build(cfg, plan, false)
}

// build is Build, tracking waves until the output fills the L2 when
// trackFill.
func build(cfg *configs.Config, plan *kernel.Plan, trackFill bool) (*GPU, error) {
	g := &GPU{cfg: cfg, engine: engine.New(),
		clk: clock.MHz(cfg.GPU.ClockMHz), plan: plan, trackFill: trackFill}
	mem, err := memory.MakeBuilder().WithEngine(g.engine).
		WithFreq(g.clk.Freq).WithConfig(cfg.Memory).
		WithNumSMs(cfg.GPU.SMCount).
		WithGranularity(cfg.Sim.MemoryGranularity).Build("Memory")
	if err != nil {
		return nil, fmt.Errorf("build memory hierarchy: %w", err)
	}
	g.mem = mem
	g.cal = sm.NewCalendar()
	g.disp = newDispatcher(cfg.SM.CTADispatchInterval, cfg.GPU.SMCount)
	g.filler = memory.NewFiller(cfg.Memory)
	g.startedAt = uint64(cfg.SM.KernelLaunchLatency)
	g.mem.Launch(g.startedAt)
	g.Acct.Init(cfg.GPU.SMCount*cfg.SM.SubPartitions, g.startedAt)
	g.serial = simulations.Add(1)
	g.env = &sm.Env{Engine: g.engine, Clock: g.clk, Config: cfg, Mem: g.mem,
		Filler: g.filler, Plan: plan, Calendar: &g.cal, Count: &g.Counters,
		Tie: g.jitter, StartedAt: g.startedAt, Serial: g.serial,
		Finished: g.ctaFinished}
	for i := 0; i < cfg.GPU.SMCount; i++ {
		g.sms = append(g.sms, sm.New(g.env, i))
	}
	g.cal.At = g.sms[0].At
	g.launchLimit = plan.CTAs
	if cfg.Kernel.L2Start == configs.L2Repeat {
		if err := g.warmL2(); err != nil {
			return nil, err
		}
	}
	if !plan.Schedule.Cuttable() {
		g.env.Flags = flags{}
	}
	if !plan.Schedule.WaveExtrapolable() {
		// Serial split-K and stream-K CTAs wait on each other through
		// flags, and stream-K's run several tiles: the fast paths, which
		// take CTAs as independent and alike, are off (see fast-paths.md).
		return g, nil
	}
	if cfg.Sim.ExtrapolateWaves {
		g.waves = newWaveTracker(g)
	}
	if g.ff = newFastForward(g); g.ff != nil {
		g.addHook(g.ff)
	}
	return g, nil
}

// addHook makes h watch the run's SMs.
func (g *GPU) addHook(h sm.Hook) { g.env.Hooks = append(g.env.Hooks, h) }

// watchBelow makes a pruner watch the run: it stops the run with a
// pruned error once the run provably takes more than above cycles
// (+Inf: never stops, but still works out its bounds).
func (g *GPU) watchBelow(above float64) *pruner {
	g.prune = newPruner(g, above)
	g.addHook(g.prune)
	return g.prune
}

// setJitter perturbs the run as ensemble run j (nil: unperturbed).
func (g *GPU) setJitter(j *jitter) {
	g.jitter = j
	g.env.Tie = j
}

// Run launches the kernel and runs the engine to completion.
func (g *GPU) Run() error {
	for slot := 0; slot < g.plan.Occupancy; slot++ {
		for _, sm := range g.sms {
			if g.nextCTA >= g.launchLimit {
				break
			}
			g.dispatchAt(sm, g.startedAt, 0)
		}
	}
	err := g.engine.Run()
	tally.WarpInstructions.Add(g.Issued)
	if err != nil {
		return err
	}
	if g.prune != nil && g.prune.bound != 0 {
		return &prunedError{bound: g.prune.bound}
	}
	if g.doneCTAs != g.launchLimit {
		return fmt.Errorf("kernel %s: %d of %d CTAs finished: the model "+
			"deadlocked", g.plan.Name(), g.doneCTAs, g.launchLimit)
	}
	return nil
}

// ctaFinished frees the CTA's slot and launches the next CTA there.
func (g *GPU) ctaFinished(c *sm.CTA, at uint64) {
	g.doneCTAs++
	c.SM.LastFinish = max(c.SM.LastFinish, at)
	c.SM.Finishes = append(c.SM.Finishes, at)
	g.EndCycle = max(g.EndCycle, at)
	if g.waves != nil {
		g.waves.finished(g, c.Index, at)
	}
	for _, h := range g.env.Hooks {
		h.CTAFinished(c, at)
	}
	if g.nextCTA < g.launchLimit {
		g.dispatchAt(c.SM, at, uint64(g.cfg.SM.CTALaunchLatency))
	}
}
