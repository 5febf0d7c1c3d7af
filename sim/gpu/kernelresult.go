package gpu

import (
	"fmt"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/sm"
)

// Result is one simulated kernel (plus its split-K reduction).
type Result struct {
	Plan   *kernel.Plan
	Cycles uint64
	// TransposeCycles are the part of Cycles the copy of a column-major
	// B before a V:N:M kernel took (kernel.Plan.TransposeB; transpose.go).
	TransposeCycles uint64
	TCBusy          uint64 // issue-slot cycles over all tensor cores
	TCUnits         int
	Breakdown       results.Breakdown
	// Busy and idle are the raw tensor-core account behind breakdown
	// (issue-slot cycles; idle cycles by reason).
	Busy uint64
	Idle [sm.NumReasons]uint64
	// Prologue is the account's prologue (sm.Account) and Phases the
	// account split by phase (phasesOf).
	Prologue uint64
	Phases   results.Phases
	// Mem is the traffic during the kernel's time (cycles): the L2's
	// write-back of dirty lines after the kernel is not in it.
	Mem       memory.Stats
	SmemBytes uint64
	// WritebackBytes are the DRAM writes of the L2 write-back after the
	// kernel (D's lines still dirty in L2), and flushCycles its time;
	// neither is in cycles or mem.
	WritebackBytes uint64
	FlushCycles    uint64
	// Extrapolated: only the first waves ran (sim.extrapolate_waves);
	// waves is then the kernel's whole wave count.
	Extrapolated bool
	Waves        int
	TrackedWaves int // the whole waves simulated before the last, when extrapolated
	// KExtrapolated: extended in K from two shorter runs
	// (sim.extrapolate_ksteps, kextrapolate.go).
	KExtrapolated bool
	// KBounded: the K fit was raised to the tensor cores' time for the
	// k-steps it adds (selection's extendInK).
	KBounded bool
	// ProbeKSteps, when > 0: re-timed at its clock from probes of this
	// many k-steps per CTA at the locked clock and this one
	// (sim.retime_probe_ksteps; selection's retime.go).
	ProbeKSteps int
	// FastForwarded is the k-steps (all CTAs together) the steady-state
	// fast-forward left out (sim.fast_forward, fastforward.go).
	FastForwarded uint64
	// Act are the energy model's event counts; clockMHz the SM clock the
	// kernel ran at; powerNote says when it could not meet the limit.
	Act       energy.Counts
	ClockMHz  int
	PowerNote string
	// RunCycles are the cycles of every ensemble run of the selected
	// kernel (run 0 first; one entry without sim.jitter_runs), and
	// candidates what the selection simulated, best first.
	RunCycles  []uint64
	Candidates []results.Candidate
	// Fidelity is the tier that timed the kernel (configs.Fidelities);
	// FastRefused, under sim.fidelity=fast, is why the fast tier handed
	// the GEMM to the instruction tier.
	Fidelity    string
	FastRefused string
	// Straggler: the SM that ran on alone at the end (straggler.go; a
	// record extended in K does not report it, its end being a fit).
	Straggler straggler
	// TailCycles: the kernel's time with some SM idle for good
	// (tailCycles). FixupBytes and FixupWait: the fix-up's traffic
	// (partial sums, a serial split's D read back, flags) and the cycles
	// CTAs waited on flags, summed over CTAs (0 but for serial split-K and
	// stream-K).
	TailCycles uint64
	FixupBytes uint64
	FixupWait  uint64
}

// Options are how Simulate runs a kernel: Observer, when set, sees its
// engine and components; Run is the ensemble run (0: unperturbed); Above,
// when > 0, stops the run with a *prunedError as soon as it provably
// takes more than Above cycles (prune.go).
type Options struct {
	Observer Observer
	Run      int
	Above    float64
}

// Simulate builds a GPU for the plan, runs the kernel and, for
// split-K, the reduction of the partial sums.
func Simulate(cfg *configs.Config, plan *kernel.Plan, o Options) (*Result, error) {
	r, err := simulate(cfg, plan, o.Observer, o.Run, o.Above, false)
	if err == nil && plan.TransposeB {
		err = addTranspose(cfg, r)
	}
	return r, err
}

// simulate is Simulate; trackFill tracks waves until the output
// fills the L2 (a run simulated again because writeBackUnseen).
func simulate(cfg *configs.Config, plan *kernel.Plan, obs Observer, run int, above float64,
	trackFill bool) (*Result, error) {
	g, err := build(cfg, plan, trackFill)
	if err != nil {
		return nil, err
	}
	if above > 0 && plan.Schedule.Cuttable() {
		g.watchBelow(above) // the pruner's bounds take CTAs as independent
	}
	g.setJitter(newJitter(cfg.Sim.Seed, run, cfg.SM.CTALaunchLatency))
	name := plan.Describe()
	if obs != nil {
		obs.KernelBuilt(name, g.engine, g.components())
		defer obs.KernelDone(name)
	}
	if err := g.Run(); err != nil {
		return nil, err
	}
	if g.waves != nil && !trackFill && g.waves.writeBackUnseen(g) {
		return simulate(cfg, plan, obs, run, above, true)
	}
	end := g.EndCycle
	if plan.Schedule == kernel.ParallelSplitK {
		end = g.reduce(end)
	}
	pre := g.mem.Stats()
	flushed, err := g.flush(end)
	if err != nil {
		return nil, err
	}
	post := g.mem.Stats()
	r := &Result{Plan: plan, Cycles: end,
		TCUnits:   len(g.sms) * cfg.SM.SubPartitions,
		Breakdown: g.breakdown(end), Mem: pre}
	r.Busy, r.Idle, r.Prologue = g.Acct.Busy, g.closedIdle(end), g.Acct.Prologue
	r.Phases = phasesOf(r.Busy, r.Idle, r.Prologue)
	r.TCBusy = g.tcBusy()
	r.Straggler = g.straggler()
	r.TailCycles = g.tailCycles()
	r.FixupBytes, r.FixupWait = g.FixupBytes, g.FixupWait
	r.SmemBytes = g.smemBytes()
	r.FlushCycles = flushed - end
	r.WritebackBytes = post.DRAMWriteBytes - pre.DRAMWriteBytes
	if g.waves != nil {
		g.waves.scale(g, r, post)
	}
	if g.ff != nil {
		g.ff.extend(r)
	}
	r.Act = g.activity(r)
	if g.ff != nil {
		g.ff.extendActivity(&r.Act)
	}
	r.ClockMHz = cfg.GPU.ClockMHz
	return r, nil
}

// components are the GPU's SMs and tensor cores, for observers.
func (g *GPU) components() []akita.Component {
	var out []akita.Component
	for _, sm := range g.sms {
		out = append(out, sm)
		for _, tc := range sm.TCs {
			out = append(out, tc)
		}
	}
	return out
}

// smemBytes is the shared-memory traffic of every SM so far.
func (g *GPU) smemBytes() uint64 {
	var b uint64
	for _, sm := range g.sms {
		b += sm.Smem.Stats().Bytes
	}
	return b
}

// tcBusy is the issue-slot cycles of every tensor core so far.
func (g *GPU) tcBusy() uint64 {
	var busy uint64
	for _, sm := range g.sms {
		for _, tc := range sm.TCs {
			busy += tc.Stats().BusyCycles
		}
	}
	return busy
}

// flush writes back D from L2 after the kernel, so that DRAM write bytes
// count the output (the kernel's time does not include the write-back,
// which overlaps the next kernel on hardware).
func (g *GPU) flush(at uint64) (uint64, error) {
	done := at
	g.sms[0].At(at, func() {
		g.mem.Flush(at, func(c uint64) { done = c })
	})
	if err := g.engine.Run(); err != nil {
		return 0, err
	}
	return done, nil
}

// reduce runs the split-K reduction as a second kernel: each SM in turn
// takes output tiles, reads their FP32 partials of every split and writes
// the final D tile.
func (g *GPU) reduce(start uint64) uint64 {
	p := g.plan
	tiles := p.TilesM * p.TilesN * p.Shape.Batch
	next := 0
	end := start
	var take func(sm *sm.SM, at uint64)
	take = func(sm *sm.SM, at uint64) {
		if next >= tiles {
			end = max(end, at)
			return
		}
		t := next
		next++
		g.reduceTile(sm, at, t, func(done uint64) { take(sm, done) })
	}
	launch := start + uint64(g.cfg.SM.KernelLaunchLatency)
	g.mem.Launch(launch)
	for _, sm := range g.sms {
		s := sm
		s.At(launch, func() { take(s, launch) })
	}
	if err := g.engine.Run(); err != nil {
		panic(fmt.Sprintf("split-K reduction: %v", err))
	}
	return end
}

func (g *GPU) reduceTile(sm *sm.SM, now uint64, t int, done func(uint64)) {
	p := g.plan
	parts := p.SplitK
	last := now
	batch := t / (p.TilesM * p.TilesN)
	tm := (t % (p.TilesM * p.TilesN)) / p.TilesN
	tn := t % p.TilesN
	for s := 0; s < p.SplitK; s++ {
		g.mem.Read(now, sm.ID, memory.CRead, p.OutputRegion(batch, tm, tn, s,
			kernel.BaseSplit, kernel.AccumulatorBytes), true, func(at uint64) {
			last = max(last, at)
			parts--
			if parts == 0 {
				g.mem.Write(last, sm.ID, memory.DWrite,
					p.OutputRegion(batch, tm, tn, 0, kernel.BaseD, p.OutBytes), done)
			}
		})
	}
}
