package sim

import (
	"errors"
	"fmt"

	"github.com/stcsim/stcsim/memory"
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
// and no booking lands before the array's calendar window. A sample's
// estimate is its
// cycles plus, when its middle waves are left out, a steady wave's time
// for each (waveTracker.leftOutCycles, not negative and fixed once the
// tracked waves have finished, when the bound adds it), so a bound above
// the best estimate so far means this candidate loses whatever its
// remaining cycles hold: stopping it changes neither the kernel chosen nor the record, only how
// long the loser's estimate took (its estimate is then that bound,
// marked pruned; TestPruningKeepsTheSelection).
type pruner struct {
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
	// maxTC and maxSmem are the largest tensor-core and shared-memory
	// bounds checked so far, and midTC and midSmem the two at the first
	// check past half the MMAs (tests hold them to the run's cycles).
	maxTC, maxSmem, midTC, midSmem uint64
}

// pruneEvery is how many MMAs pass between two checks of the bound.
const pruneEvery = 256

func newPruner(g *gpu, above float64) *pruner {
	p := &pruner{above: above,
		total: skippedMMAs(g.plan, 0) - skippedMMAs(g.plan, g.launchLimit),
		units: uint64(len(g.sms) * g.cfg.SM.SubPartitions), interval: uint64(g.issueInterval(g.plan))}
	p.smemNeed = make([]uint64, g.launchLimit)
	need := newSmemNeed(g)
	for i := range p.smemNeed {
		p.smemNeed[i] = need.of(i)
		p.smemAll += p.smemNeed[i]
	}
	return p
}

// check runs after each MMA issued at cycle now.
func (p *pruner) check(g *gpu, now uint64) {
	issued := g.issuedOp[OpMMA] + g.issuedOp[OpMMASP]
	if issued < p.next || p.bound != 0 {
		return
	}
	p.next = issued + pruneEvery
	left := p.total - min(p.total, issued)
	lb := now + (left+p.units-1)/p.units*p.interval
	for _, sm := range g.sms {
		for _, sp := range sm.sps {
			lb = max(lb, now+sp.mmaLeft*p.interval)
		}
	}
	p.maxTC = max(p.maxTC, lb)
	sb := p.smemBound(g)
	p.maxSmem = max(p.maxSmem, sb)
	if p.midTC == 0 && 2*issued >= p.total {
		p.midTC, p.midSmem = lb, sb
	}
	lb = max(lb, sb)
	if w := g.waves; w != nil && w.tracked() {
		lb += w.leftOutCycles(g) // what the estimate adds for the waves left out, known now
	}
	if float64(lb) > p.above {
		p.bound = lb
		g.engine.Stop()
	}
}

// smemBound is the cycle before which the bank arrays cannot have served
// the wavefronts the run still needs. Of an SM's own CTAs' needs, what
// its array has not booked yet (everything it booked counts against
// them, epilogue and spare prefetches too, which only weakens the bound)
// takes whole cycles from the array's window start on; and all the
// CTAs' needs, the unlaunched ones' too, share the SMs' arrays: by cycle
// T they serve at most the sum over SMs of (T - floor) cycles' worth, so
// T is at least (the floors' sum + the units left / a cycle's) / SMs.
func (p *pruner) smemBound(g *gpu) uint64 {
	var lb, floors, booked, perWave, perCycle uint64
	for _, sm := range g.sms {
		floor, b, w, c := sm.smem.Backlog()
		perWave, perCycle = w, c
		floors += floor
		booked += b
		if need := sm.smemNeed * w; need > b {
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
// its whole k-step out keeps the count below what the MMAs need).
type smemNeed struct {
	p      *kernelPlan
	f      *memory.Filler
	sm     *smUnit // for the LDSM patterns (the same on every SM)
	ldsm   []struct{ prologue, body uint64 }
	copies [][2][]Instr // per warp: prologue and body LDGSTS
}

func newSmemNeed(g *gpu) *smemNeed {
	n := &smemNeed{p: g.plan, f: memory.NewFiller(g.cfg.Memory), sm: g.sms[0]}
	for w := 0; w < g.plan.warps; w++ {
		prog := g.plan.program(w)
		var l struct{ prologue, body uint64 }
		var cp [2][]Instr
		for part, list := range [][]Instr{prog.Prologue, prog.Body} {
			for _, in := range list {
				switch in.Op {
				case OpLDSM:
					v := uint64(n.sm.ldsmPattern(in.Operand).WavefrontsOf(int(in.Bytes)))
					if part == 0 {
						l.prologue += v
					} else {
						l.body += v
					}
				case OpLDGSTS:
					cp[part] = append(cp[part], in)
				}
			}
		}
		n.ldsm = append(n.ldsm, l)
		n.copies = append(n.copies, cp)
	}
	return n
}

// of is CTA idx's need.
func (n *smemNeed) of(idx int) uint64 {
	c := planCTA(n.p, idx)
	var waves uint64
	fill := func(in Instr, k int) {
		class, r := c.chunkRegion(k, in.Operand, int(in.Chunk))
		if r.Rows > 0 {
			waves += uint64(n.f.Plan(r, n.p.smemLayout(class)).Wavefronts)
		}
	}
	for w, cp := range n.copies {
		waves += n.ldsm[w].prologue + uint64(max(0, c.steps-1))*n.ldsm[w].body
		for _, in := range cp[0] {
			fill(in, int(in.Stage))
		}
		for iter := 0; iter < c.steps; iter++ {
			for _, in := range cp[1] {
				k := int(in.Stage)
				if in.Stage < 0 {
					k = iter + n.p.tile.Stages - 1
				}
				fill(in, k)
			}
		}
	}
	return waves
}

// prunedError is a sample stopped by its pruner: it cannot take fewer
// than bound cycles.
type prunedError struct{ bound uint64 }

func (e *prunedError) Error() string {
	return fmt.Sprintf("selection sample stopped: at least %d cycles", e.bound)
}

// prunedBound is the bound of a run that err says was pruned.
func prunedBound(err error) (uint64, bool) {
	var pe *prunedError
	if errors.As(err, &pe) {
		return pe.bound, true
	}
	return 0, false
}
