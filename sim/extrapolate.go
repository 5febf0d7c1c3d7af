package sim

import (
	"github.com/stcsim/stcsim/memory"
)

// extrapolationWaves is how many waves are simulated when
// sim.extrapolate_waves is on: the first wave (fill) and two steady ones.
const extrapolationWaves = 3

// waveTracker simulates a kernel's first waves only and measures the
// steady state between the end of wave 1 and the end of the last
// simulated wave. A wave is sm_count x occupancy consecutive CTAs in
// launch order.
type waveTracker struct {
	perWave   int
	total     int // waves of the whole kernel
	simulated int
	left      []int    // CTAs of each simulated wave not yet finished
	end       []uint64 // cycle each simulated wave finished
	memAt1    memory.Stats
	tcBusyAt1 uint64
	smemAt1   uint64
	acctAt1   timeAccount
}

// newWaveTracker limits the launch to the first waves when the kernel
// has enough waves for extrapolation to pay; otherwise it returns nil and
// the kernel is simulated in full.
func newWaveTracker(g *gpu) *waveTracker {
	perWave := g.cfg.GPU.SMCount * g.plan.occupancy
	total := ceilDiv(g.plan.ctas, perWave)
	if total <= extrapolationWaves+1 {
		return nil
	}
	w := &waveTracker{perWave: perWave, total: total,
		simulated: extrapolationWaves,
		left:      make([]int, extrapolationWaves),
		end:       make([]uint64, extrapolationWaves)}
	for i := range w.left {
		w.left[i] = perWave
	}
	g.launchLimit = extrapolationWaves * perWave
	return w
}

func (w *waveTracker) finished(g *gpu, idx int, at uint64) {
	k := idx / w.perWave
	w.left[k]--
	if w.left[k] > 0 {
		return
	}
	w.end[k] = at
	if k == 0 {
		w.memAt1 = g.mem.Stats()
		w.tcBusyAt1 = g.tcBusy()
		w.smemAt1 = g.smemBytes()
		w.acctAt1 = timeAccount{busy: g.acct.busy, idle: g.acct.idle}
	}
}

// scale extends a result of the simulated waves to the whole kernel:
// cycles, tensor-core busy time and traffic grow by the steady per-wave
// increments for every wave not simulated.
func (w *waveTracker) scale(g *gpu, r *kernelResult, post memory.Stats) {
	steady := uint64(w.simulated - 1)
	last := w.end[w.simulated-1]
	// The CTAs left run at the steady rate (a wave's CTAs per steady
	// wave time): with CTAs starting wherever a slot frees, the waves
	// blur and the drain at the end is already in the simulated run, so
	// a last partial wave costs its share of a wave, not a whole one.
	moreCTAs := float64(g.plan.ctas - g.launchLimit)
	perCTA := 1 / (float64(steady) * float64(w.perWave))
	r.cycles += uint64(moreCTAs*float64(last-w.end[0])*perCTA + 0.5)
	f := func(e, a uint64) uint64 {
		return e + uint64(moreCTAs*float64(e-a)*perCTA+0.5)
	}
	r.tcBusy = f(r.tcBusy, w.tcBusyAt1)
	r.smemBytes = f(r.smemBytes, w.smemAt1)
	pre := r.mem
	r.mem = scaleStats(r.mem, w.memAt1, f)
	w.scaleWrites(&r.mem, g, pre, post)
	busy := f(g.acct.busy, w.acctAt1.busy)
	// The steady waves' idle scales; the drain after the last MMAs
	// (tail, wave quantization) happens once.
	closed := g.closedIdle(g.endCycle)
	var idle [numReasons]uint64
	sum := busy
	for i := range idle {
		idle[i] = f(g.acct.idle[i], w.acctAt1.idle[i]) + closed[i] - g.acct.idle[i]
		sum += idle[i]
	}
	if all := r.cycles * uint64(r.tcUnits); all > sum {
		idle[whyTail] += all - sum
	}
	r.busy, r.idle = busy, idle
	r.breakdown = shares(busy, idle)
	r.extrapolated = true
	r.waves = w.total
}

// scaleWrites scales DRAM writes by CTA count instead: every CTA's D tile
// reaches DRAM exactly once, during the run (evictions) or at the
// write-back after it, so the per-wave increment of the run alone
// undercounts it. The write-back is taken as the simulated run's (the
// lines dirty in L2 at the end, bounded by L2), and the kernel's own
// writes as the rest of the scaled total.
func (w *waveTracker) scaleWrites(s *memory.Stats, g *gpu, pre, post memory.Stats) {
	own := func(pre, post uint64) uint64 {
		total := post * uint64(g.plan.ctas) / uint64(g.launchLimit)
		back := post - pre
		return total - min(total, back)
	}
	s.DRAMWriteBytes = max(s.DRAMWriteBytes, own(pre.DRAMWriteBytes, post.DRAMWriteBytes))
	for c := range s.PerClass {
		s.PerClass[c].DRAMWriteBytes = max(s.PerClass[c].DRAMWriteBytes,
			own(pre.PerClass[c].DRAMWriteBytes, post.PerClass[c].DRAMWriteBytes))
	}
}

// scaleStats extends every counter by f (the steady per-CTA increment
// times the CTAs not simulated).
func scaleStats(end, at1 memory.Stats, f func(e, a uint64) uint64) memory.Stats {
	s := end
	s.L1Bytes = f(end.L1Bytes, at1.L1Bytes)
	s.L2Bytes = f(end.L2Bytes, at1.L2Bytes)
	s.DRAMReadBytes = f(end.DRAMReadBytes, at1.DRAMReadBytes)
	s.DRAMWriteBytes = f(end.DRAMWriteBytes, at1.DRAMWriteBytes)
	s.L1HitSectors = f(end.L1HitSectors, at1.L1HitSectors)
	s.L1MissSectors = f(end.L1MissSectors, at1.L1MissSectors)
	s.L2HitSectors = f(end.L2HitSectors, at1.L2HitSectors)
	s.L2MissSectors = f(end.L2MissSectors, at1.L2MissSectors)
	for c := range s.PerClass {
		e, a := end.PerClass[c], at1.PerClass[c]
		s.PerClass[c] = memory.ClassStats{
			L1Bytes:        f(e.L1Bytes, a.L1Bytes),
			L2Bytes:        f(e.L2Bytes, a.L2Bytes),
			DRAMReadBytes:  f(e.DRAMReadBytes, a.DRAMReadBytes),
			DRAMWriteBytes: f(e.DRAMWriteBytes, a.DRAMWriteBytes)}
	}
	return s
}
