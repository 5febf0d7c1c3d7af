package sim

import (
	"fmt"
	"sync/atomic"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/internal/engine"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// simulations counts GPUs built in this process (trace task ids).
var simulations atomic.Uint64

// instructionsSimulated counts the warp instructions every GPU of this
// process has issued, selection samples and stopped samples included:
// the simulator's work, independent of the machine's speed
// (BenchmarkReferenceSuite reports it).
var instructionsSimulated atomic.Uint64

// gpu is one simulated GPU running one kernel: SMs with their
// sub-partitions' tensor cores and shared memory, the CTA scheduler, and
// the memory hierarchy, all on one serial engine (internal/engine: Akita's
// SerialEngine's event order, at less cost per event).
type gpu struct {
	cfg    *configs.Config
	engine *engine.Serial
	prune  *pruner // stops a losing selection sample (nil: runs to the end)
	clk    clock.Clock
	mem    memory.Hierarchy
	filler *memory.Filler // cp.async fills into shared memory
	sms    []*smUnit
	plan   *kernel.Plan

	nextCTA     int
	doneCTAs    int
	launchLimit int          // CTAs launched: all, or the extrapolation window
	waves       *waveTracker // nil unless extrapolating
	ff          *fastForward // nil unless fast-forwarding (fastforward.go)
	serial      uint64       // distinguishes simulations in traces
	endCycle    uint64
	startedAt   uint64
	acct        timeAccount
	cal         calendar
	disp        *dispatcher
	onStart     func(idx int, now uint64) // observes CTA starts (tests)
	issued      uint64                    // warp instructions issued (instruction-level SM)
	issuedOp    [isa.NumOpcodes]uint64    // the same by opcode class
	rfRead      uint64                    // register-file bytes read (instruction-level SM)
	rfWrite     uint64                    // register-file bytes written
	// jitter perturbs CTA dispatch and same-cycle tie order in an
	// ensemble run (nil: the unperturbed model; see jitter.go).
	jitter *jitter
}

// buildGPU makes the GPU of a config for one kernel plan. One
// parameterised builder serves every config.
func buildGPU(cfg *configs.Config, plan *kernel.Plan) (*gpu, error) {
	g := &gpu{cfg: cfg, engine: engine.New(),
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
	g.filler = memory.NewFiller(cfg.Memory)
	g.startedAt = uint64(cfg.SM.KernelLaunchLatency)
	g.acct.init(cfg.GPU.SMCount*cfg.SM.SubPartitions, g.startedAt)
	for i := 0; i < cfg.GPU.SMCount; i++ {
		g.sms = append(g.sms, g.buildSM(i))
	}
	g.launchLimit = plan.CTAs
	g.serial = simulations.Add(1)
	if cfg.Sim.ExtrapolateWaves {
		g.waves = newWaveTracker(g)
	}
	g.ff = newFastForward(g)
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
	for slot := 0; slot < g.plan.Occupancy; slot++ {
		for _, sm := range g.sms {
			if g.nextCTA >= g.launchLimit {
				break
			}
			g.dispatchAt(sm, g.startedAt, 0)
		}
	}
	err := g.engine.Run()
	instructionsSimulated.Add(g.issued)
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
func (g *gpu) ctaFinished(c *cta, at uint64) {
	g.doneCTAs++
	c.sm.lastFinish = max(c.sm.lastFinish, at)
	c.sm.finishes = append(c.sm.finishes, at)
	g.endCycle = max(g.endCycle, at)
	if g.waves != nil {
		g.waves.finished(g, c.Index, at)
	}
	if g.ff != nil {
		g.ff.finished(c)
	}
	if g.nextCTA < g.launchLimit {
		g.dispatchAt(c.sm, at, uint64(g.cfg.SM.CTALaunchLatency))
	}
}

// fillCause splits the trip of an LDGSTS chunk's fill (memory.FillDone)
// over the breakdown's reasons, as weights summing to 1: all to smem when
// the bank array's write queue was its longest wait; else its last line's
// unloaded latency to the level it came from (DRAM when it missed L2,
// else L2), its queueing to the level of the longest queue (a DRAM
// channel: DRAM bandwidth; an L2 slice or the SM's crossbar port: L2
// bandwidth), and the rest of the trip, the wait of a hit for a DRAM fill
// already in flight, to DRAM: latency up to dram.latency, bandwidth
// beyond (the fill it waited for was queueing).
func (g *gpu) fillCause(d memory.FillDone) (w [numReasons]float64) {
	c := d.Cause()
	if c == memory.CauseSmem {
		w[whySmem] = 1
		return w
	}
	lat, bw := whyL2, whyL2BW
	if c.IsDRAM() || d.Info.DRAMSectors > 0 {
		lat = whyDRAM
	}
	if c == memory.CauseDRAMBandwidth {
		bw = whyDRAMBW
	}
	u, q := d.Info.Unloaded(), d.Info.Queued()
	merge := max(0, float64(d.Arrived-d.Issued)-u-q)
	mLat := min(merge, float64(g.cfg.Memory.DRAM.Latency))
	w[lat] += u
	w[bw] += q
	w[whyDRAM] += mLat
	w[whyDRAMBW] += merge - mLat
	total := u + q + merge
	if total <= 0 {
		var one [numReasons]float64
		one[lat] = 1
		return one
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

// issueInterval is the cycles between MMAs of the plan's mode on one
// tensor core.
func (g *gpu) issueInterval(p *kernel.Plan) int { return p.Datapath.Interval }
