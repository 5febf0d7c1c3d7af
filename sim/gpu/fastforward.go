package gpu

import (
	"math"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/memory/memcfg"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/sm"
)

// Steady-state fast-forward (sim.fast_forward). Inside a wave, once
// every resident CTA is past its pipeline's fill and no CTA starts or
// ends, the kernel is in a steady state: each CTA's k-steps follow one
// another at a mean period, though not exactly periodically (the warps'
// fragment loads and the cp.async packets meet in the bank array in a
// different order each k-step; docs/performance.md). The fast-forward
// measures that period over a window of ffWindow k-steps of every
// resident CTA, then leaves out the same stretch of time, delta, from
// every one of them: CTA c skips round(delta / P) k-steps, P being the
// mean period of the CTAs on SMs holding as many CTAs as c's and as old
// among them as c (decide). A skip
// takes effect at the CTA's next k-step barrier, where all its warps
// stand at the same instruction of the same k-step: their k-step counter
// moves on, so the CTA's copies continue from the k-step after the ones
// left out, and the L2 tags see the left-out k-steps' tiles (memory.Toucher,
// in touch) so that what later waves find in L2 is what the full run
// leaves there, and the L2 traffic is the full run's.
// The kernel's cycles gain delta, or the time the touched DRAM traffic
// takes at the DRAM's sustained rate where that is longer (dramCycles);
// the L2 traffic is counted in the touch, and every other counter
// (tensor-core busy and idle time by cause, shared-memory bytes, the
// busiest servers' busy cycles, the energy model's SM events) gains the
// window's increment per MMA times the MMAs left out. The first
// ffWarmExtra + stages k-steps of every CTA (the lock-step start, the
// pipeline's fill) and its last stages + ffTail are always simulated, and
// a wave whose CTAs start or end inside the window is measured again from
// the next steady moment. Its agreement
// with the full simulation is tested on a named family
// (TestFastForwardCloseToFull) and on DRAM-bound skinny GEMMs
// (TestFastForwardCloseToFullWhenDRAMBound).
const (
	// ffWarmExtra: k-steps beyond the pipeline's depth a CTA runs after
	// its launch before its k-steps count as steady.
	ffWarmExtra = 2
	// ffWindow: k-step periods of every resident CTA the steady rate is
	// measured over.
	ffWindow = 8
	// ffTail: k-steps before its end a CTA always simulates (the drain:
	// the last stages' copies, the epilogue's stores).
	ffTail = 2
	// ffMinSkip: the fewest k-steps worth leaving out (in periods of the
	// slowest CTA group).
	ffMinSkip = 2
)

// ffPhase is where the fast-forward stands in the current composition
// of resident CTAs.
type ffPhase uint8

const (
	ffWaiting   ffPhase = iota // not every resident CTA is steady yet
	ffMeasuring                // the window is open
	ffDone                     // skipped (or nothing to skip) until a CTA starts or ends
)

// fastForward is one run's fast-forward state.
type fastForward struct {
	sm.HookBase
	g        *GPU
	resident []*sm.CTA
	state    []ffCTA // per CTA launch index
	warm     int     // resident CTAs past their warm-up
	phase    ffPhase
	counted  int // resident CTAs with a full window
	s0       ffSnap
	// offset is the time left out so far; add the counters' increments
	// for it.
	offset float64
	add    ffSnap
	// skipped counts the k-steps left out (all CTAs together), for the
	// record's note.
	skipped uint64
	// points are the skips' cycles and the time each left out.
	points []ffPoint
}

type ffPoint struct {
	at    uint64
	delta float64
}

// ffCTA is a CTA's fast-forward state.
type ffCTA struct {
	slot     int    // index in fastForward.resident
	releases int    // k-step barriers passed since launch
	lastK    int    // the k-step of the last barrier
	winN     int    // barriers in the current window
	winFirst uint64 // cycle of the window's first barrier
	winLast  uint64 // and of its last
	skip     int    // k-steps to leave out at the next barrier
}

// ffSnap is the counters the fast-forward extends.
type ffSnap struct {
	Mem          memory.Stats
	TCBusy, Smem uint64
	Busy         uint64
	Idle         [sm.NumReasons]uint64
	Prologue     uint64
	MMAs         uint64
	Act          energy.Counts // the SM-side events (gpu.smActivity)
}

// counters are every counter of s, in a fixed order (Extend).
func (s *ffSnap) counters() []*uint64 {
	c := append(s.Mem.Counters(), &s.TCBusy, &s.Smem, &s.Busy, &s.Prologue, &s.MMAs)
	for i := range s.Idle {
		c = append(c, &s.Idle[i])
	}
	return append(c, s.Act.Counters()...)
}

// newFastForward arms the fast-forward for a run, or returns nil where it
// does not apply: switched off, a wave-extrapolated run (whose tracked
// waves measure the steady state themselves), a sample of K
// extrapolation, a memory model without tag touching, or CTAs too short
// to leave anything out after their fill, window and drain. A traced
// run is fast-forwarded as an untraced one (the same record); its
// timeline is simulated time, without the stretches left out.
func newFastForward(g *GPU) *fastForward {
	if !FastForwards(g.cfg, g.plan, g.waves != nil) {
		return nil
	}
	if _, ok := g.mem.(memory.Toucher); !ok {
		return nil
	}
	return &fastForward{g: g, state: make([]ffCTA, g.launchLimit)}
}

func (g *GPU) snap() ffSnap {
	return ffSnap{Mem: rated(g.mem.Stats()), TCBusy: g.tcBusy(), Smem: g.smemBytes(),
		Busy: g.Acct.Busy, Idle: g.Acct.Idle, Prologue: g.Acct.Prologue,
		MMAs: g.IssuedOp[isa.OpMMA] + g.IssuedOp[isa.OpMMASP], Act: g.smActivity()}
}

// rated is s with only what the fast-forward extends by the window's
// rate: its busiest servers' busy cycles and its request count. The
// traffic itself is counted where the left-out k-steps' tiles are
// touched (touch).
func rated(s memory.Stats) memory.Stats {
	return memory.Stats{MaxL1Busy: s.MaxL1Busy, MaxSliceBusy: s.MaxSliceBusy,
		MaxChannelBusy: s.MaxChannelBusy, MaxPortBusy: s.MaxPortBusy,
		Requests: s.Requests}
}

// reported is the cycle a simulated cycle t stands for in the kernel's
// time: t plus the time left out before it.
func (f *fastForward) reported(t uint64) uint64 {
	if f == nil {
		return t
	}
	var off float64
	for _, s := range f.points {
		if s.at <= t {
			off += s.delta
		}
	}
	return t + uint64(off+0.5)
}

// st is CTA c's fast-forward state.
func (f *fastForward) st(c *sm.CTA) *ffCTA { return &f.state[c.Index] }

// CTAStarted counts a CTA that has just launched: the composition
// changed.
func (f *fastForward) CTAStarted(c *sm.CTA) {
	f.st(c).slot = len(f.resident)
	f.resident = append(f.resident, c)
	f.phase = ffWaiting
}

// CTAFinished removes a CTA that has ended.
func (f *fastForward) CTAFinished(c *sm.CTA, _ uint64) {
	last := f.resident[len(f.resident)-1]
	f.resident[f.st(c).slot] = last
	f.st(last).slot = f.st(c).slot
	f.resident = f.resident[:len(f.resident)-1]
	if f.st(c).releases >= f.warmK() {
		f.warm--
	}
	f.phase = ffWaiting
}

// leftAt is how many k-steps a CTA of steps k-steps whose last barrier
// was in k-step k can leave out: the skip lands at its next barrier, in
// k-step k+1, and the k-steps left out must be ones that copy a stage
// (k-step i copies k-step i+stages-1's) and leave ffTail k-steps after
// the last copy.
func (f *fastForward) leftAt(steps, k int) int {
	return steps - (k + 1) - f.g.plan.Tile.Stages - ffTail
}

func (f *fastForward) warmK() int { return f.g.plan.Tile.Stages + ffWarmExtra }

// KStepBarrier is CTA c's k-step barrier (in its k-step k) letting its
// warps go on at cycle at.
func (f *fastForward) KStepBarrier(c *sm.CTA, k int, at uint64) {
	st := f.st(c)
	if st.skip > 0 {
		f.apply(c)
		return
	}
	st.releases++
	st.lastK = k
	if st.releases == f.warmK() {
		f.warm++
	}
	switch f.phase {
	case ffWaiting:
		if f.warm == len(f.resident) && f.g.disp.pending.Len() == 0 {
			f.open()
		}
	case ffMeasuring:
		st.winN++
		if st.winN == 1 {
			st.winFirst = at
		}
		st.winLast = at
		if st.winN == ffWindow+1 {
			if f.counted++; f.counted == len(f.resident) {
				f.decide()
			}
		}
	}
}

// open starts the window: every resident CTA is steady.
func (f *fastForward) open() {
	f.phase = ffMeasuring
	f.counted = 0
	for _, c := range f.resident {
		f.st(c).winN = 0
	}
	f.s0 = f.g.snap()
}

// decide sets each resident CTA's skip from the periods measured over
// the window and books the time and the counters left out.
func (f *fastForward) decide() {
	f.phase = ffDone
	g, p := f.g, f.g.plan
	// CTAs are alike when their SMs hold as many CTAs and, where the
	// scheduling policy favours the oldest warps (gto), they are as old
	// among them: their group is (CTAs on the SM, CTAs on it launched
	// before; 0 under a policy that favours none).
	type group struct{ n, rank int }
	perSM := make(map[*sm.SM][]int)
	for _, c := range f.resident {
		perSM[c.SM] = append(perSM[c.SM], c.Index)
	}
	groupOf := func(c *sm.CTA) group {
		g := group{n: len(perSM[c.SM])}
		if !c.SM.SchedulesByAge() {
			return g // no CTA is favoured: all on an SM run alike
		}
		for _, i := range perSM[c.SM] {
			if i < c.Index {
				g.rank++
			}
		}
		return g
	}
	// The mean period of each group.
	sum, num := map[group]float64{}, map[group]float64{}
	for _, c := range f.resident {
		k := groupOf(c)
		sum[k] += float64(f.st(c).winLast-f.st(c).winFirst) / float64(f.st(c).winN-1)
		num[k]++
	}
	period := func(c *sm.CTA) float64 { k := groupOf(c); return sum[k] / num[k] }
	avail := func(c *sm.CTA) int { return f.leftAt(c.Steps, f.st(c).lastK) }
	delta, slowest := math.Inf(1), 0.0
	for _, c := range f.resident {
		delta = min(delta, float64(avail(c))*period(c))
		slowest = max(slowest, period(c))
	}
	if delta < ffMinSkip*slowest {
		return
	}
	var time float64
	var mmas uint64
	perKStep := uint64(p.Warps * p.Groups * p.MMAPerGroup)
	for _, c := range f.resident {
		j := min(avail(c), int(math.Round(delta/period(c))))
		f.st(c).skip = j
		time += float64(j) * period(c)
		mmas += uint64(j) * perKStep
		f.skipped += uint64(j)
		if pr := g.prune; pr != nil {
			pr.skipped(g, c, f.st(c).lastK+1, j)
		}
	}
	if mmas == 0 {
		return
	}
	s1 := g.snap()
	m0 := g.mem.Stats()
	f.touch()
	d := max(time/float64(len(f.resident)), f.dramCycles(m0, g.mem.Stats()))
	f.offset += d
	f.points = append(f.points, ffPoint{at: g.sms[0].CB.Now(), delta: d})
	ratio := float64(mmas) / float64(max(1, s1.MMAs-f.s0.MMAs))
	Extend(f.add.counters(), f.s0.counters(), s1.counters(),
		func(e, a0, a1 uint64) uint64 { return e + uint64(float64(a1-min(a1, a0))*ratio+0.5) })
}

// dramCycles is the least time the DRAM takes to move the traffic
// between m0 and m1 (the left-out k-steps' reads and the write-backs of
// the victims they evict, counted by touch): the reads at the DRAM's
// sustained rate and the writes at its write efficiency. The channels
// serve at that rate and no faster (memory's DRAM channels), and while
// the skipped stretch runs every DRAM byte is the left-out k-steps',
// so the stretch lasts at least this long however fast the window's
// k-steps followed one another: a window measured while the pipelines
// drain stages prefetched earlier, or whose CTA groups are timed over
// different stretches of it, gives a period shorter than the DRAM can
// sustain on a DRAM-bound kernel (a 65536x1x4096 GEMV-shaped GEMM was
// timed at 1633 GB/s on a 1555 GB/s DRAM).
func (f *fastForward) dramCycles(m0, m1 memory.Stats) float64 {
	dram := f.g.cfg.Memory.DRAM
	perCycle := dram.SustainedBytesPerCycle(float64(f.g.clk.Freq))
	reads := float64(m1.DRAMReadBytes - m0.DRAMReadBytes)
	writes := float64(m1.DRAMWriteBytes-m0.DRAMWriteBytes) * dram.Efficiency / dram.WriteEfficiency
	return (reads + writes) / perCycle
}

// addTo adds the increments left out to dst, an ffSnap.
func (f *fastForward) addTo(dst *ffSnap) {
	a := f.add.counters()
	Extend(dst.counters(), a, a, func(e, x, _ uint64) uint64 { return e + x })
}

// touch reads the tiles whose copies the skips leave out in the L2 tags,
// in the order the CTAs would have copied them: k-step by k-step, every
// CTA's k-step in turn, as they run side by side (one CTA's whole
// stretch after another's would evict what the next finds shared with
// it: on 2048x2048x8192 dense that doubled the DRAM reads). A CTA whose
// skip lands in k-step k (its next barrier) would have copied k-steps
// k+stages on in the k-steps it leaves out.
func (f *fastForward) touch() {
	t := f.g.mem.(memory.Toucher)
	most := 0
	for _, c := range f.resident {
		most = max(most, f.st(c).skip)
	}
	for d := 0; d < most; d++ {
		for _, c := range f.resident {
			if d < f.st(c).skip {
				for _, r := range c.Tiles(f.st(c).lastK + 1 + c.Plan.Tile.Stages + d) {
					t.Touch(r.Class, r.Region)
				}
			}
		}
	}
}

// apply leaves out CTA c's skip at its barrier (the one after the
// window's last, in some k-step k): its warps go on in k-step k+skip.
func (f *fastForward) apply(c *sm.CTA) {
	st := f.st(c)
	j := st.skip
	st.skip = 0
	c.SkipKSteps(j)
}

// extend adds the time and counters left out to a run's result.
func (f *fastForward) extend(r *Result) {
	if len(f.points) == 0 {
		return
	}
	r.Cycles += uint64(f.offset + 0.5)
	s := ffSnap{Mem: r.Mem, TCBusy: r.TCBusy, Smem: r.SmemBytes, Busy: r.Busy, Idle: r.Idle,
		Prologue: r.Prologue}
	f.addTo(&s)
	r.Mem, r.TCBusy, r.SmemBytes = s.Mem, s.TCBusy, s.Smem
	// A unit idle for good (its SM has no CTA left, or never had one)
	// books its idle time only when the account closes, over the
	// simulated cycles: the stretches left out are its too, wave
	// quantization, not the tail.
	r.fillAccount(s.Busy, &s.Idle, sm.WhyWaves)
	r.SetAccount(s.Busy, s.Idle, s.Prologue)
	r.FastForwarded = f.skipped
}

// extendActivity adds the SM-side events left out to act.
func (f *fastForward) extendActivity(act *energy.Counts) {
	if len(f.points) == 0 {
		return
	}
	s := ffSnap{Act: *act}
	f.addTo(&s)
	*act = s.Act
}

// offsetCycles is the time left out so far (0 without a fast-forward).
func (f *fastForward) offsetCycles() uint64 {
	if f == nil {
		return 0
	}
	return uint64(f.offset + 0.5)
}

// FastForwards says whether a run of p under cfg is fast-forwarded
// (newFastForward's rule without the run): the switch is on, the run is
// not wave-extrapolated (extrapolated: the run's waves are) nor a K
// sample, the memory model touches tags (the fast one), and the CTAs are
// long enough to leave something out. The work estimate (sim.Prepared.KSteps)
// asks it.
func FastForwards(cfg *configs.Config, p *kernel.Plan, extrapolated bool) bool {
	// A GEMV's CTAs pass no k-step barrier (their warps share no
	// stage), where the fast-forward measures and skips.
	if !cfg.Sim.FastForward || extrapolated || p.KSampled || !p.Schedule.Cuttable() ||
		cfg.Sim.MemoryGranularity != memcfg.Fast {
		return false
	}
	warm := p.Tile.Stages + ffWarmExtra
	return min(p.KSteps, p.LastKSteps)-(warm+ffWindow+1)-p.Tile.Stages-ffTail >= ffMinSkip
}

// FastForwardKept is the fewest k-steps a CTA of a fast-forwarded run
// simulates when its wave holds still: its warm-up (the pipeline's fill
// and ffWarmExtra), the measuring window and the barrier the skip lands
// at, and the drain (the last stages' copies and ffTail).
func FastForwardKept(p *kernel.Plan) int {
	return p.Tile.Stages + ffWarmExtra + ffWindow + 1 + p.Tile.Stages + ffTail
}
