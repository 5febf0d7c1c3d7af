package sm

// policy is a sub-partition's warp-scheduling policy (sm.scheduler_policy):
// the order in which each of its warp schedulers offers its warps the
// issue slots of a cycle. GPGPU-Sim's scheduler_unit::order_warps
// subclasses are the same idea.
type policy interface {
	// order appends scheduler s's resident warps of sp to buf in issue
	// priority.
	order(sp *SubPartition, s int, buf []*Warp) []*Warp
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
