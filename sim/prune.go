package sim

import (
	"errors"
	"fmt"
)

// pruner stops a kernel-selection sample as soon as it provably cannot
// beat the best candidate simulated before it (select.go). The proof is
// a lower bound on the sample's cycles: a tensor core takes at most one
// MMA per issue interval, so a sub-partition whose resident warps have L
// MMAs still to issue is busy at least L intervals after now, and the
// MMAs of the CTAs not yet launched must go to some tensor core, so all
// the MMAs left need at least ceil(left / tensor cores) intervals after
// now; the kernel ends no sooner than either. A sample's estimate is its
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
}

// pruneEvery is how many MMAs pass between two checks of the bound.
const pruneEvery = 256

func newPruner(g *gpu, above float64) *pruner {
	return &pruner{above: above,
		total: skippedMMAs(g.plan, 0) - skippedMMAs(g.plan, g.launchLimit),
		units: uint64(len(g.sms) * g.cfg.SM.SubPartitions), interval: uint64(g.issueInterval(g.plan))}
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
	if w := g.waves; w != nil && w.tracked() {
		lb += w.leftOutCycles(g) // what the estimate adds for the waves left out, known now
	}
	if float64(lb) > p.above {
		p.bound = lb
		g.engine.Stop()
	}
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
