package sm

// policy is a sub-partition's warp-scheduling policy (sm.scheduler_policy):
// the order in which each of its warp schedulers offers its warps the
// issue slots of a cycle. GPGPU-Sim's scheduler_unit::order_warps
// subclasses are the same idea.
type policy interface {
	// order is scheduler s's walk over the resident warps of sp, in
	// issue priority.
	order(sp *SubPartition, s int) walk
	// issued tells the policy scheduler s issued from w.
	issued(s int, w *Warp)
	// byAge says whether the policy favours older warps, so that a CTA's
	// place among the CTAs of its SM decides how it runs.
	byAge() bool
}

// newPolicy is the policy of sm.scheduler_policy for schedulers warp
// schedulers ("gto" or "lrr"; the config's loader checks the name).
func newPolicy(name string, schedulers int) policy {
	if name == "lrr" {
		return &lrr{next: make([]int, schedulers)}
	}
	return &gto{}
}

// maxSchedulers is the most sm.warp_schedulers may be (configs/bounds.go).
const maxSchedulers = 8

// walk is the order in which one scheduler offers its issue slots: the
// warp first (if not nil), then sp.warps from index start on, wrapping
// around, skipping first and the other schedulers' warps. It is taken
// before any warp issues: an issue may make warps resident (a CTA
// finishing; they are appended), and those wait for the next scan.
type walk struct {
	first *Warp
	start int
	n     int // resident warps when the walk was taken
}

// at is the walk's i-th candidate (nil: skip it); i runs from 0 to
// w.n (inclusive: 0 is first).
func (wk *walk) at(sp *SubPartition, s, i int) *Warp {
	if i == 0 {
		return wk.first
	}
	w := sp.warps[(wk.start+i-1)%wk.n]
	if w == wk.first || w.sched != s {
		return nil
	}
	return w
}
