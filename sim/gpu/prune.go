package gpu

import (
	"errors"
	"fmt"
	"math"

	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/sm"
)

// pruner stops a kernel-selection sample as soon as it provably cannot
// beat the best candidate simulated before it (select.go). The proof is
// a lower bound on the sample's cycles: a tensor core takes at most one
// MMA per issue interval, so a sub-partition whose resident warps have L
// MMAs still to issue is busy at least L intervals after now, and the
// MMAs of the CTAs not yet launched must go to some tensor core, so all
// the MMAs left need at least ceil(left / tensor cores) intervals after
// now; the kernel ends no sooner than either. The shared-memory bank
// array gives a second bound of the same kind (smemBound): the wavefronts
// of the fragments the MMAs read and of the stages those fragments come
// from are known per CTA, a cycle serves at most one wavefront's worth,
// and no booking lands before the array's calendar window. Both are
// tightened by counting the CTAs not yet started whole, one SM each
// (waveBound, smemWaveBound: wave quantization). A sample's estimate is
// its cycles plus, when its middle waves are left out, a steady wave's time
// for each (waveTracker.leftOutCycles, not negative and fixed once the
// tracked waves have finished, when the bound adds it), so a bound above
// the best estimate so far means this candidate loses whatever its
// remaining cycles hold: stopping it changes neither the kernel chosen nor the record, only how
// long the loser's estimate took (its estimate is then that bound,
// marked pruned; TestPruningKeepsTheSelection).
type pruner struct {
	sm.HookBase
	g        *GPU
	above    float64 // the best estimate so far: stop once the bound exceeds it
	total    uint64  // MMAs of the CTAs this run launches
	units    uint64  // tensor cores
	interval uint64  // cycles a tensor core holds one MMA's issue slot
	next     uint64  // MMAs issued at the next check
	bound    uint64  // the bound that stopped the run (0: not stopped)
	// smemNeed is, per CTA this run launches, the bank-array wavefronts
	// it cannot finish without (ctaSmemNeed); smemAll is their sum.
	smemNeed []uint64
	smemAll  uint64
	// smNeed is, per SM, the smemNeed of the CTAs started there (less
	// what the fast-forward left out).
	smNeed []uint64
	// mmaLeft is, per sub-partition (tensor-core unit), the MMAs its
	// resident warps have still to issue.
	mmaLeft []uint64
	// smemLeast[i] is the least smemNeed of CTAs i and after (the CTAs
	// not yet started are those from nextCTA on and those pending).
	smemLeast []uint64
	need      *smemNeed // per-CTA need (the fast-forward takes its skips out)
	// floors and rest are smemWaveBound's per-SM window starts and
	// units still needed, kept to spare an allocation per check.
	floors, rest []uint64
	// ctaMMAs is, per sub-partition of an SM, the fewest MMAs a CTA not
	// yet started gives it to issue (its warps there, at the plan's
	// shortest split); see waveBound.
	ctaMMAs []uint64
	// maxTC, maxSmem and maxWave are the largest tensor-core,
	// shared-memory and wave bounds checked so far, and midTC, midSmem
	// and midWave the three at the first check past half the MMAs
	// (tests hold them to the run's cycles).
	maxTC, maxSmem, maxWave, midTC, midSmem, midWave uint64
	// exhaustive works out every bound at every check (tests), not only
	// those that could stop the run.
	exhaustive bool
	// waveGain and smemGain are the most the wave bounds have been above
	// the tensor cores' and the bank arrays' spread at one check (tests:
	// they must bind where CTAs are left over).
	waveGain, smemGain uint64
}

// pruneEvery is how many MMAs pass between two checks of the bound.
const pruneEvery = 256

func newPruner(g *GPU, above float64) *pruner {
	p := &pruner{g: g, above: above,
		total: skippedMMAs(g.plan, 0) - skippedMMAs(g.plan, g.launchLimit),
		units: uint64(len(g.sms) * g.cfg.SM.SubPartitions), interval: uint64(g.plan.Datapath.Interval)}
	p.ctaMMAs = ctaMMAsPerSP(g.plan, g.cfg.SM.SubPartitions)
	p.smemNeed = make([]uint64, g.launchLimit)
	p.smNeed = make([]uint64, len(g.sms))
	p.mmaLeft = make([]uint64, p.units)
	need := newSmemNeed(g)
	p.need = need
	for i := range p.smemNeed {
		p.smemNeed[i] = need.of(i)
		p.smemAll += p.smemNeed[i]
	}
	p.smemLeast = make([]uint64, g.launchLimit+1)
	p.smemLeast[g.launchLimit] = math.MaxUint64
	for i := g.launchLimit - 1; i >= 0; i-- {
		p.smemLeast[i] = min(p.smemNeed[i], p.smemLeast[i+1])
	}
	return p
}

// CTAStarted books CTA c's bank-array need to its SM.
func (p *pruner) CTAStarted(c *sm.CTA) { p.smNeed[c.SM.ID] += p.smemNeed[c.Index] }

// WarpResident books warp w's MMAs to its sub-partition.
func (p *pruner) WarpResident(sp *sm.SubPartition, w *sm.Warp) {
	pl := p.g.plan
	p.mmaLeft[sp.Unit] += uint64(w.CTA.Steps * pl.Groups * pl.MMAPerGroup)
}

// MMAIssued counts an MMA of sp issued at now and checks the bound.
func (p *pruner) MMAIssued(sp *sm.SubPartition, now uint64) {
	p.mmaLeft[sp.Unit]--
	p.check(p.g, now)
}

// check runs after each MMA issued at cycle now.
func (p *pruner) check(g *GPU, now uint64) {
	issued := g.IssuedOp[isa.OpMMA] + g.IssuedOp[isa.OpMMASP]
	if issued < p.next || p.bound != 0 {
		return
	}
	p.next = issued + pruneEvery
	left := p.total - min(p.total, issued)
	var most uint64 // the most MMAs one sub-partition has left
	for _, m := range p.mmaLeft {
		most = max(most, m)
	}
	lb := now + max((left+p.units-1)/p.units, most)*p.interval
	off := g.ff.offsetCycles() // the tests' max and mid bounds are in the estimate's time
	p.maxTC = max(p.maxTC, lb+off)
	sb := p.smemBound(g)
	var extra uint64
	if w := g.waves; w != nil && w.tracked() {
		extra = w.leftOutCycles(g) // what the estimate adds for the waves left out, known now
	}
	extra += off // the time the fast-forward left out

	// The whole-CTA bounds search over the SMs: they are worked out only
	// while the cheaper ones do not already stop the run, and each only
	// if its largest value could (every check when exhaustive, as in
	// tests).
	limit := p.above - float64(extra)
	var wb uint64
	if p.exhaustive || float64(max(lb, sb)) <= limit {
		wb = p.waveBound(g, now, most, limit)
		if sw := p.smemWaveBound(g, limit); sw > sb {
			p.smemGain = max(p.smemGain, sw-sb)
			sb = sw
		}
	}
	p.maxSmem = max(p.maxSmem, sb+off)
	if wb > 0 {
		p.maxWave = max(p.maxWave, wb+off)
	}
	if wb > lb {
		p.waveGain = max(p.waveGain, wb-lb)
	}
	if p.midTC == 0 && 2*issued >= p.total {
		p.midTC, p.midSmem, p.midWave = lb+off, sb+off, wb
	}
	lb = max(lb, sb, wb) + extra
	if float64(lb) > p.above {
		p.bound = lb
		g.engine.Stop()
	}
}

// ctaMMAsPerSP is, per sub-partition, the MMAs one CTA of p gives it at
// the fewest k-steps any of p's CTAs has: a CTA's warp w lives on
// sub-partition w mod sps (cta.launch), and each of its k-steps issues
// groups x mmaPerGrp MMAs per warp.
func ctaMMAsPerSP(p *kernel.Plan, sps int) []uint64 {
	out := make([]uint64, sps)
	steps := uint64(min(p.KSteps, p.LastKSteps))
	for w := 0; w < p.Warps; w++ {
		out[w%sps] += steps * uint64(p.Groups*p.MMAPerGroup)
	}
	return out
}

// waveBound is the tensor cores' bound with the CTAs not yet started
// counted whole (wave quantization): each must run on one SM, where it
// adds ctaMMAs[j] MMAs to sub-partition j behind the mmaLeft it has now,
// one per issue interval. The fewest intervals T from now in which the
// SMs can absorb them is the least T at which the CTAs each SM could
// finish by T, min over j of (T - mmaLeft_j) / ctaMMAs[j] rounded down,
// add up to the CTAs left. Any placement the dispatcher makes (and any
// number of CTAs sharing an SM at once) ends no sooner, so the kernel's
// last MMA issues no sooner than now + T intervals. Where the CTAs left
// do not divide over the SMs, this is up to one CTA's MMAs above the
// spread of all MMAs over all tensor cores (the bound in check).
//
// lo is the most MMAs one sub-partition has left. It is 0 where even
// its largest value (every SM taking an even share) could not pass limit,
// unless the pruner is exhaustive.
func (p *pruner) waveBound(g *GPU, now, lo uint64, limit float64) uint64 {
	left := unstarted(g)
	var most uint64
	for _, m := range p.ctaMMAs {
		most = max(most, m)
	}
	if left == 0 || most == 0 {
		return 0
	}
	fit := func(s int, t uint64) uint64 {
		c := uint64(math.MaxUint64)
		for j, sp := range g.sms[s].SPs {
			if m := p.ctaMMAs[j]; m > 0 {
				c = min(c, (t-p.mmaLeft[sp.Unit])/m)
			}
		}
		return c
	}
	// Below lo a sub-partition has not even issued what it holds; by hi
	// every SM has taken ceil(left / SMs) CTAs.
	hi := lo + ceilDivU(left, uint64(len(g.sms)))*most
	if !p.exhaustive && float64(now+hi*p.interval) <= limit {
		return 0
	}
	return now + leastToAbsorb(left, len(g.sms), fit, lo, hi)*p.interval
}

// smemWaveBound is the bank arrays' bound with the CTAs not yet started
// counted whole, as waveBound counts them for the tensor cores: each adds
// at least the least need among them to the one SM it runs on, and SM s
// serves at most perCycle units a cycle from its window start floor_s,
// after what its own CTAs still need (their need less what it has
// booked). The array bounds end no sooner than the least cycle T by
// which the SMs' arrays can serve the CTAs left, whole. Like waveBound,
// it is 0 where its largest value could not pass limit.
func (p *pruner) smemWaveBound(g *GPU, limit float64) uint64 {
	left := unstarted(g)
	if left == 0 {
		return 0
	}
	least := p.smemLeast[g.nextCTA]
	for _, it := range g.disp.pending.Items {
		least = min(least, p.smemNeed[it.V.idx])
	}
	if len(p.floors) != len(g.sms) {
		p.floors, p.rest = make([]uint64, len(g.sms)), make([]uint64, len(g.sms))
	}
	floors, rest := p.floors, p.rest
	var perWave, perCycle, lo, hi uint64
	for i, sm := range g.sms {
		floor, b, w, c := sm.Smem.Backlog()
		perWave, perCycle = w, c
		floors[i], rest[i] = floor, 0
		if need := p.smNeed[i] * w; need > b {
			rest[i] = need - b
		}
		lo = max(lo, floor+ceilDivU(rest[i], c))
	}
	unit := least * perWave
	if unit == 0 || perCycle == 0 {
		return 0
	}
	k := ceilDivU(left, uint64(len(g.sms)))
	for i := range g.sms {
		hi = max(hi, floors[i]+ceilDivU(rest[i]+k*unit, perCycle))
	}
	if !p.exhaustive && float64(hi) <= limit {
		return 0
	}
	fit := func(s int, t uint64) uint64 {
		if t <= floors[s] {
			return 0
		}
		if room := (t - floors[s]) * perCycle; room > rest[s] {
			return (room - rest[s]) / unit
		}
		return 0
	}
	return leastToAbsorb(left, len(g.sms), fit, lo, hi)
}

// unstarted is how many CTAs of the run have not started: those not yet
// dispatched and those dispatched but still pending.
func unstarted(g *GPU) uint64 {
	return uint64(g.launchLimit-g.nextCTA) + uint64(g.disp.pending.Len())
}

// leastToAbsorb is the least t in [lo, hi] by which the SMs can take n
// whole CTAs between them, fit(s, t) being how many SM s can take by t
// (non-decreasing in t; at hi they take n or more).
func leastToAbsorb(n uint64, sms int, fit func(s int, t uint64) uint64, lo, hi uint64) uint64 {
	fits := func(t uint64) bool {
		var k uint64
		for s := 0; s < sms; s++ {
			if k += fit(s, t); k >= n {
				return true
			}
		}
		return false
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func ceilDivU(a, b uint64) uint64 { return (a + b - 1) / b }

// smemBound is the cycle before which the bank arrays cannot have served
// the wavefronts the run still needs. Of an SM's own CTAs' needs, what
// its array has not booked yet (everything it booked counts against
// them, epilogue and spare prefetches too, which only weakens the bound)
// takes whole cycles from the array's window start on; and all the
// CTAs' needs, the unlaunched ones' too, share the SMs' arrays: by cycle
// T they serve at most the sum over SMs of (T - floor) cycles' worth, so
// T is at least (the floors' sum + the units left / a cycle's) / SMs.
func (p *pruner) smemBound(g *GPU) uint64 {
	var lb, floors, booked, perWave, perCycle uint64
	for i, sm := range g.sms {
		floor, b, w, c := sm.Smem.Backlog()
		perWave, perCycle = w, c
		floors += floor
		booked += b
		if need := p.smNeed[i] * w; need > b {
			lb = max(lb, floor+(need-b+c-1)/c)
		}
	}
	if need := p.smemAll * perWave; need > booked && perCycle > 0 {
		lb = max(lb, (floors+(need-booked)/perCycle)/uint64(len(g.sms)))
	}
	return lb
}

// smemNeed counts the bank-array wavefronts a CTA of a plan cannot finish
// without: every LDGSTS chunk its warps copy (a stage of one of its
// k-steps, as warp.copy cuts it) written as its fill plan says, and the
// LDSM fragments its MMAs read: the prologue's and every k-step's but
// the last (which also prefetches a k-group that no MMA reads; leaving
// its whole k-step out keeps the count below what the MMAs need), and
// its epilogue's staging.
type smemNeed struct {
	p      *kernel.Plan
	f      *memory.Filler
	sm     *sm.SM // for the LDSM patterns (the same on every SM)
	ldsm   []struct{ prologue, body uint64 }
	copies [][2][]isa.Instr // per warp: prologue and body LDGSTS
	// epi is, per warp, its epilogue's staging wavefronts (STS and LDS
	// of D), where every CTA runs the plain epilogue once.
	epi []uint64
}

func newSmemNeed(g *GPU) *smemNeed {
	n := &smemNeed{p: g.plan, f: memory.NewFiller(g.cfg.Memory), sm: g.sms[0]}
	for w := 0; w < g.plan.Warps; w++ {
		prog := g.plan.Program(w)
		var l struct{ prologue, body uint64 }
		var cp [2][]isa.Instr
		for part, list := range [][]isa.Instr{prog.Prologue, prog.Body} {
			for _, in := range list {
				switch in.Op {
				case isa.OpLDSM, isa.OpLDS:
					if in.Operand == isa.OperandD {
						continue
					}
					v := uint64(n.sm.LoadPattern(&in).WavefrontsOf(int(in.Bytes)))
					if part == 0 {
						l.prologue += v
					} else {
						l.body += v
					}
				case isa.OpLDGSTS:
					cp[part] = append(cp[part], in)
				}
			}
		}
		n.ldsm = append(n.ldsm, l)
		n.copies = append(n.copies, cp)
		n.epi = append(n.epi, n.staging(prog.Epilogue))
	}
	return n
}

// staging is the wavefronts an epilogue's STS and LDS of D take, for the
// schedules whose CTAs each run the plain epilogue once (0 for the
// others, whose segments end otherwise).
func (n *smemNeed) staging(epi []isa.Instr) uint64 {
	if n.p.Schedule != kernel.DataParallel && n.p.Schedule != kernel.ParallelSplitK {
		return 0
	}
	var v uint64
	for _, in := range epi {
		if (in.Op == isa.OpSTS || in.Op == isa.OpLDS) && in.Operand == isa.OperandD {
			v += uint64(n.sm.StagingPattern().WavefrontsOf(int(in.Bytes)))
		}
	}
	return v
}

// of is CTA idx's need.
func (n *smemNeed) of(idx int) uint64 {
	c := kernel.NewCTA(n.p, idx)
	var waves uint64
	for w, cp := range n.copies {
		waves += n.ldsm[w].prologue + uint64(max(0, c.Steps-1))*n.ldsm[w].body + n.epi[w]
		for _, in := range cp[0] {
			waves += n.fill(&c, in, int(in.Stage))
		}
		waves += n.body(&c, w, 0, c.Steps)
	}
	return waves
}

// body is the wavefronts warp w of CTA c writes with its k-steps' copies
// in iterations [from, to) (iteration i copies k-step i+stages-1's stage).
func (n *smemNeed) body(c *kernel.CTA, w, from, to int) uint64 {
	var waves uint64
	for iter := from; iter < to; iter++ {
		for _, in := range n.copies[w][1] {
			k := int(in.Stage)
			if in.Stage < 0 {
				k = iter + n.p.Tile.Stages - 1
			}
			waves += n.fill(c, in, k)
		}
	}
	return waves
}

// fill is the least wavefronts the LDGSTS in writes for k-step k of CTA
// c (0 where its chunk is predicated off).
func (n *smemNeed) fill(c *kernel.CTA, in isa.Instr, k int) uint64 {
	class, r := c.ChunkRegion(k, in.Operand, int(in.Chunk))
	if r.Rows == 0 {
		return 0
	}
	return uint64(n.f.LeastWavefronts(n.f.Plan(r, n.p.SmemLayout(class))))
}

// skipped takes the k-steps from+1 .. from+j of CTA c, which the
// fast-forward leaves out, out of what the bounds count: their MMAs and
// their bank-array wavefronts (their LDSMs and the stages they copy).
// The bounds then hold for the rest of the run, and the estimate adds
// the time left out (check's extra).
func (p *pruner) skipped(g *GPU, c *sm.CTA, from, j int) {
	p.total -= uint64(j * g.plan.Warps * g.plan.Groups * g.plan.MMAPerGroup)
	for _, w := range c.Warps {
		p.mmaLeft[w.SP.Unit] -= uint64(j * g.plan.Groups * g.plan.MMAPerGroup)
	}
	n := p.need
	var waves uint64
	for w := range n.copies {
		waves += uint64(j)*n.ldsm[w].body + n.body(&c.CTA, w, from+1, from+1+j)
	}
	p.smNeed[c.SM.ID] -= min(p.smNeed[c.SM.ID], waves)
	p.smemAll -= min(p.smemAll, waves)
}

// prunedError is a sample stopped by its pruner: it cannot take fewer
// than bound cycles.
type prunedError struct{ bound uint64 }

func (e *prunedError) Error() string {
	return fmt.Sprintf("selection sample stopped: at least %d cycles", e.bound)
}

// PrunedBound is the bound of a run that err says was pruned.
func PrunedBound(err error) (uint64, bool) {
	var pe *prunedError
	if errors.As(err, &pe) {
		return pe.bound, true
	}
	return 0, false
}
