package gpu

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/sm"
)

// TrackedWaves is how many whole waves of the plan are simulated, before
// its last, when sim.extrapolate_waves is on: the first wave (fill) and
// steady ones. The steady step is measured over the last steadyWindow
// of them. At two CTAs or more per SM that is three waves. At one CTA per SM it is
// six: the first wave's CTAs start together and finish within a few
// dozen cycles of each other, so the next waves start in lock-step too
// and drift apart only over several waves (docs/sm.md: on 4096x2048x1024
// dense with 64x64x64_32x32_s6, 19 waves, the mean CTA duration is
// 9 776, 9 671 and 9 429 cycles in waves 2-4 and 9 290-9 380 from wave
// 6; measured over waves 1-3 the step extrapolates +3.25 %, over waves
// 4-6 +0.52 %).
func TrackedWaves(p *kernel.Plan) int {
	if p.Occupancy == 1 {
		return 6
	}
	return 3
}

// trackedWavesFor is TrackedWaves, raised where the kernel writes more
// output than the L2 holds, so that the waves before the steady window
// fill the L2 with their output first. Until they have, a wave's stores
// allocate dirty lines and evict only clean ones, and its DRAM carries
// reads alone; once they have, every wave's stores evict dirty lines
// whose write-back shares DRAM with the next waves' reads, the state
// every later wave runs in. A run whose steady window came before that
// and could not have carried the write-back is simulated again with
// these waves tracked (writeBackUnseen). perWave is the CTAs of one wave,
// l2Bytes the L2's capacity.
func trackedWavesFor(p *kernel.Plan, perWave int, l2Bytes uint64) int {
	n := TrackedWaves(p)
	tile := outputTileBytes(p)
	if tile == 0 || tile*uint64(p.CTAs) <= l2Bytes {
		return n
	}
	fill := int((l2Bytes + tile*uint64(perWave) - 1) / (tile * uint64(perWave)))
	return max(n, fill+steadyWindow)
}

// outputTileBytes is what one CTA writes: its tile of D, or of FP32
// partials into the split-K workspace.
func outputTileBytes(p *kernel.Plan) uint64 {
	if p.SplitK > 1 {
		return uint64(p.Tile.BM * p.Tile.BN * 4)
	}
	return uint64(p.Tile.BM * p.Tile.BN * p.OutBytes)
}

// writeBackUnseen reports whether the run's steady window came before its
// output filled the L2 (trackedWavesFor tracks more waves than it did) and
// a steady wave's DRAM reads plus the write-back of a wave's output, which
// every wave after the fill pays, need more DRAM time than the measured
// steady wave lasts: the extrapolation would time waves in a state the
// kernel leaves. On ResNet-50's conv1 at batch 32 (D 51 MB, 40 MB of L2)
// the three tracked waves extrapolated 116 256 cycles against 151 753 in
// full.
func (w *waveTracker) writeBackUnseen(g *GPU) bool {
	if trackedWavesFor(g.plan, w.perWave, L2Bytes(g.cfg)) <= w.simulated {
		return false
	}
	steps := float64(w.simulated - 1 - w.from)
	reads := float64(w.at[1].mem.DRAMReadBytes-w.at[0].mem.DRAMReadBytes) / steps
	perCycle := g.cfg.Memory.DRAM.SustainedBytesPerCycle(float64(g.clk.Freq))
	return reads+float64(outputTileBytes(g.plan))*float64(w.perWave) > w.steadyWave()*perCycle
}

// minExtrapolatedWaves is the fewest waves a kernel needs for its middle
// waves to be left out: with fewer, the waves left out would be few and
// the tracked ones not yet steady (CTAs of a few k-steps finish wave 1
// among the next waves' CTAs). Long CTAs at two or more per SM need
// fewer (minWavesFor). It is at least trackedWaves + 2, so that
// one wave or more is left out (and a kernel whose tracked waves are
// raised by trackedWavesFor needs those + 2).
const minExtrapolatedWaves = 8

// longCTAKSteps is the fewest k-steps (every split's) that make a kernel's
// CTAs long: their first wave finishes before the next waves' CTAs are
// far along, so the waves after it are steady and a kernel of
// trackedWaves + 2 waves can be extrapolated (minWavesFor). Such CTAs
// on an SM drift apart within the first wave (one ends while the other
// is mid-way), so the fast-forward, which needs every resident CTA
// steady and none starting or ending, finds no steady moment after it:
// Llama-2-7B's 2048-token FFN gate/up projection (11008x2048x4096
// dense, 128x128x32_64x64_s5, 7 waves) left out 4 % of its k-steps.
// Shorter CTAs keep the 8 waves: the fast-forward covers more of them
// (the same prefill's attention context product, 64 k-steps, 5 waves of
// two CTAs per SM, left out 29 % of its k-steps, more than the 20 %
// extrapolation would). TestLongCTAsExtrapolateFromFiveWaves and, in
// the long tier, TestLongCTAsFewWavesOnTheA100 hold it to the full
// simulation.
const longCTAKSteps = 128

// minWavesFor is the fewest waves plan p needs to be wave-extrapolated
// under cfg: minExtrapolatedWaves, or for a power-cap re-timing probe
// (kernel.Plan.RetimeProbe) its tracked waves and two, or for long CTAs (longCTAKSteps) at
// two or more per SM whose tensor cores bind rather than the DRAM
// (tensorBound) its tracked waves and two (one left out, and the last).
// A DRAM-bound kernel's CTAs keep in step, and the fast-forward leaves
// out more of it than extrapolation from so few waves would (10240x1x8192
// sparse, 64x64x64_32x32_s6, 5 waves on 16 SMs at 230 GB/s: 68 % of its
// k-steps, -0.08 % against the full run in cycles either way).
func minWavesFor(cfg *configs.Config, p *kernel.Plan) int {
	if p.RetimeProbe { // only its change between two clocks is used
		return TrackedWaves(p) + 2
	}
	if p.Schedule != kernel.GEMV && p.Occupancy >= 2 && min(p.KSteps, p.LastKSteps) >= longCTAKSteps &&
		tensorBound(cfg, p) {
		return TrackedWaves(p) + 2
	}
	return minExtrapolatedWaves
}

// tensorBound says whether the pre-model's demands put p's tensor-core
// time (every CTA's k-steps at their tensor-core cycles, over the SMs)
// above the DRAM time of its operands' unique bytes and D at the
// sustained rate (sim/demand).
func tensorBound(cfg *configs.Config, p *kernel.Plan) bool {
	d := demand.Of(cfg, p)
	tc := float64(d.KSteps) * d.TCCycles / float64(max(1, cfg.GPU.SMCount))
	dram := (d.ABytes + d.MetaBytes + d.BBytes + d.DBytes) / max(1e-9, d.DRAMBytesPerClk)
	return tc > dram
}

// steadyWindow is how many of the last tracked waves the steady step and
// increments are measured over (the ends of the first and last of them).
const steadyWindow = 3

// waveTracker simulates a kernel's first waves (trackedWaves) and its
// last one, and measures the steady state between the ends of the first
// and last waves of the steady window (waves 1 and 3 at two CTAs or more
// per SM, 4 and 6 at one). A wave is sm_count x occupancy consecutive
// CTAs in launch order. The waves between are left out: the run launches the kernel's
// CTAs less that many whole waves, so its tail has the kernel's own
// shape (a last wave's quantization, its drain, CTAs that blur across
// waves), and each left-out wave costs one steady wave. The tail's time
// can still differ from the full run's by where the last CTAs land
// (docs/sm.md: on 8192x4096x1024 with 128x128x32 tiles the full run's
// end is set by an SM that got two of the last CTAs late in the tail,
// 4.9 % after the extrapolated end; over a jitter ensemble of three the
// means differ by 2.2 %, inside both runs' spreads).
type waveTracker struct {
	perWave   int
	total     int       // waves of the whole kernel
	simulated int       // whole waves tracked, before the last
	from      int       // the first wave of the steady window (0-based)
	left      []int     // CTAs of each tracked wave not yet finished
	sum       []float64 // sum of its CTAs' finish cycles
	// at are the counters when the steady window's first and last waves
	// finished: the steady state lies between them.
	at [2]waveSnap
}

// waveSnap is the kernel's counters at the end of a wave.
type waveSnap struct {
	mem          memory.Stats
	tcBusy, smem uint64
	acct         sm.Account
	work         uint64 // units of work issued by then (g.work)
}

// newWaveTracker limits the launch to the first waves when the kernel
// has enough waves for extrapolation to pay; otherwise it returns nil and
// the kernel is simulated in full.
func newWaveTracker(g *GPU) *waveTracker {
	perWave := g.cfg.GPU.SMCount * g.plan.Occupancy
	tracked := TrackedWaves(g.plan)
	if g.trackFill {
		tracked = trackedWavesFor(g.plan, perWave, L2Bytes(g.cfg))
	}
	launched, ok := trackedLaunch(g.cfg, g.plan, perWave, tracked)
	if !ok {
		return nil
	}
	w := &waveTracker{perWave: perWave, total: g.plan.Waves(g.cfg.GPU.SMCount),
		simulated: tracked, from: tracked - steadyWindow,
		left: make([]int, tracked),
		sum:  make([]float64, tracked)}
	for i := range w.left {
		w.left[i] = perWave
	}
	g.launchLimit = launched
	return w
}

// ExtrapolatedLaunch is how many CTAs a wave-extrapolated run of the plan
// launches at perWave CTAs per wave (its tracked waves and its last,
// whole or partial), and whether it has waves enough to be extrapolated.
// (A run that writeBackUnseen finds wrong runs again with more waves
// tracked: the work estimate counts the first run only.)
func ExtrapolatedLaunch(cfg *configs.Config, p *kernel.Plan, perWave int) (int, bool) {
	return trackedLaunch(cfg, p, perWave, TrackedWaves(p))
}

// minGEMVKSteps is the fewest k-steps a GEMV's CTAs need for its waves
// to be extrapolated. Its CTAs of fewer are a load and a burst of math
// each and their waves never settle: 8192 x 1 x 1024 (one k-step) on 16
// SMs extrapolated +3.2 % in cycles and -24 % in DRAM reads
// (TestGEMVExtrapolationCloseToFull's log has the measured family). The
// decode GEMVs have 4 k-steps or more (K >= 4096 in fp16).
const minGEMVKSteps = 4

// trackedLaunch is ExtrapolatedLaunch with tracked waves before the last.
func trackedLaunch(cfg *configs.Config, p *kernel.Plan, perWave, tracked int) (int, bool) {
	total := kernel.CeilDiv(p.CTAs, perWave)
	if total < max(minWavesFor(cfg, p), tracked+2) ||
		(p.Schedule == kernel.GEMV && p.KSteps < minGEMVKSteps) {
		return p.CTAs, false
	}
	skipped := total - tracked - 1
	return p.CTAs - skipped*perWave, true
}

// L2Bytes is the config's L2 capacity in bytes.
func L2Bytes(cfg *configs.Config) uint64 { return uint64(cfg.Memory.L2.SizeKB) * 1024 }

func (w *waveTracker) finished(g *GPU, idx int, at uint64) {
	k := idx / w.perWave
	if k >= len(w.left) {
		return
	}
	w.left[k]--
	w.sum[k] += float64(at)
	if w.left[k] > 0 {
		return
	}
	if k == w.from || k == len(w.left)-1 {
		slot := 1
		if k == w.from {
			slot = 0
		}
		w.at[slot] = waveSnap{mem: g.mem.Stats(), tcBusy: g.tcBusy(),
			smem: g.smemBytes(), acct: sm.Account{Busy: g.Acct.Busy, Idle: g.Acct.Idle,
				Prologue: g.Acct.Prologue},
			work: g.work()}
	}
}

// scale extends a result of the simulated waves to the whole kernel:
// cycles by a steady wave's time per wave left out, tensor-core busy
// time, traffic and the time breakdown by the steady increments per unit
// of work (an MMA; a GEMV's FP32-pipe instruction).
func (w *waveTracker) scale(g *GPU, r *Result, post memory.Stats) {
	// Each left-out wave costs a steady wave's time, and the left-out
	// CTAs' work the steady counts per unit of work. The wave's time is
	// the step in its CTAs' mean finish cycle (a wave's last CTA is a
	// straggler whose delay the next wave absorbs). The counts are the
	// increments over the steady window per MMA issued in it, times the
	// left-out CTAs' MMAs (known exactly from their k-steps): per MMA and
	// not per CTA finished, because the CTAs in flight at the two ends are
	// not equally far along (per finished CTA, tensor-core busy time came
	// out 7-13 % off on 8192^3, 16384^3 and 8192x4096x1024 with 128x128x32
	// tiles).
	r.Cycles += w.leftOutCycles(g)
	perWork := float64(skippedWork(g.plan, g.launchLimit)) /
		float64(max(1, w.at[1].work-w.at[0].work))
	f := func(e, a1, a3 uint64) uint64 {
		return e + uint64(float64(a3-a1)*perWork+0.5)
	}
	a1, a3 := &w.at[0], &w.at[1]
	r.TCBusy = f(r.TCBusy, a1.tcBusy, a3.tcBusy)
	r.SmemBytes = f(r.SmemBytes, a1.smem, a3.smem)
	pre := r.Mem
	r.Mem = scaleStats(r.Mem, a1.mem, a3.mem, f)
	w.scaleWrites(&r.Mem, g, pre, post)
	busy := f(r.Busy, a1.acct.Busy, a3.acct.Busy)
	var idle [sm.NumReasons]uint64
	for i := range idle {
		idle[i] = f(r.Idle[i], a1.acct.Idle[i], a3.acct.Idle[i])
	}
	r.SetAccount(busy, idle, f(r.Prologue, a1.acct.Prologue, a3.acct.Prologue))
	r.Extrapolated = true
	r.Waves = w.total
	r.TrackedWaves = w.simulated
}

// leftOutCycles is what the waves left out add to the kernel's cycles:
// the step in the mean CTA finish cycle per wave over the steady window,
// per wave left out. Known once the last tracked wave has finished
// (tracked reports whether it has).
func (w *waveTracker) leftOutCycles(g *GPU) uint64 {
	moreCTAs := float64(g.plan.CTAs - g.launchLimit)
	return uint64(moreCTAs/float64(w.perWave)*w.steadyWave() + 0.5)
}

// steadyWave is the step in the mean CTA finish cycle per wave over the
// steady window.
func (w *waveTracker) steadyWave() float64 {
	n := float64(w.perWave)
	return (w.sum[w.simulated-1]/n - w.sum[w.from]/n) / float64(w.simulated-1-w.from)
}

// tracked reports whether the tracked waves have all finished.
func (w *waveTracker) tracked() bool { return w.left[len(w.left)-1] == 0 }

// work is the units of work the warps have issued: MMA instructions, and
// a GEMV's FP32-pipe instructions (a tile plan issues none of those, a
// GEMV no MMA). The wave extrapolation extends its counters per unit.
func (g *GPU) work() uint64 {
	return g.IssuedOp[isa.OpMMA] + g.IssuedOp[isa.OpMMASP] + g.IssuedOp[isa.OpFMA]
}

// skippedWork is the units of work (GPU.work) of the plan's CTAs from
// launched on: their MMAs, or a GEMV's FP32-pipe instructions.
func skippedWork(p *kernel.Plan, launched int) uint64 {
	if p.Schedule == kernel.GEMV {
		return uint64(p.CTAs-min(max(launched, 0), p.CTAs)) * uint64(p.FMAPerCTA())
	}
	return skippedMMAs(p, launched)
}

// skippedMMAs is the MMA instructions of the plan's CTAs from launched
// on, which the run leaves out.
func skippedMMAs(p *kernel.Plan, launched int) uint64 {
	// CTAs are numbered split by split (ctaCoord), so those of the last
	// split, which take lastKSteps, are the highest-numbered ones.
	launched = min(max(launched, 0), p.CTAs)
	lastFrom := p.CTAs - p.TilesM*p.TilesN*p.Shape.Batch
	last := uint64(p.CTAs - max(launched, lastFrom))
	others := uint64(p.CTAs-launched) - last
	steps := others*uint64(p.KSteps) + last*uint64(p.LastKSteps)
	return steps * uint64(p.Warps*p.Groups*p.MMAPerGroup)
}

// scaleWrites scales DRAM writes by CTA count instead: every CTA's D tile
// reaches DRAM exactly once, during the run (evictions) or at the
// write-back after it, so the per-wave increment of the run alone
// undercounts it. The write-back is taken as the simulated run's (the
// lines dirty in L2 at the end, bounded by L2), and the kernel's own
// writes as the rest of the scaled total. Under kernel.l2_start=repeat
// the run also writes back the previous call's dirty output it finds in
// L2 (memory.Warmer.InheritedWrites): that is one L2's worth at most
// whatever the kernel's size, so it is added once, not scaled by CTAs
// (scaled, a 4096x8192x128 GEMM on 16 waves wrote 2.02x its output
// within the kernel, 135.7 MB against 67.1 MB in full).
func (w *waveTracker) scaleWrites(s *memory.Stats, g *GPU, pre, post memory.Stats) {
	var inh memory.Stats
	if wm, ok := g.mem.(memory.Warmer); ok {
		inh = wm.InheritedWrites()
	}
	own := func(pre, post, inh uint64) uint64 {
		total := (post-inh)*uint64(g.plan.CTAs)/uint64(g.launchLimit) + inh
		back := post - pre
		return total - min(total, back)
	}
	s.DRAMWriteBytes = max(s.DRAMWriteBytes, own(pre.DRAMWriteBytes, post.DRAMWriteBytes, inh.DRAMWriteBytes))
	for c := range s.PerClass {
		s.PerClass[c].DRAMWriteBytes = max(s.PerClass[c].DRAMWriteBytes,
			own(pre.PerClass[c].DRAMWriteBytes, post.PerClass[c].DRAMWriteBytes, inh.PerClass[c].DRAMWriteBytes))
	}
}

// scaleStats extends every counter by f (the steady per-CTA increment
// between a1 and a3, times the CTAs not simulated).
func scaleStats(end, a1, a3 memory.Stats, f func(e, a1, a3 uint64) uint64) memory.Stats {
	s := end
	Extend(s.Counters(), a1.Counters(), a3.Counters(), f)
	return s
}

// Extend sets every counter of dst to f(its value, the same counter in a1,
// in a3). The three lists are one type's Counters (memory.Stats,
// energy.Counts, ffSnap), so they match field by field.
func Extend(dst, a1, a3 []*uint64, f func(e, a1, a3 uint64) uint64) {
	for i, d := range dst {
		*d = f(*d, *a1[i], *a3[i])
	}
}
