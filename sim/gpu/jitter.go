package gpu

import (
	"math/rand"
)

// jitter perturbs one ensemble run (sim.jitter_runs > 1) so that kernel
// selection and the reported cycles do not rest on one arbitrary
// interleaving of a chaotic model. Run 0 is the unperturbed model (a nil
// *jitter); run k > 0 draws, from a generator seeded by sim.seed and k:
//
//   - a dispatch offset for every CTA launch, uniform in
//     [0, sm.cta_launch_latency] cycles (the hardware's CTA dispatcher
//     does not start every SM on the same cycle, nor refill a freed slot
//     after a fixed delay);
//   - a tie offset for every event an SM schedules for itself, a
//     fraction of a cycle in [0, maxTie), which reorders events that fall
//     on the same cycle (which SM's request reaches the crossbar first)
//     without moving any of them to another cycle.
//
// The SM model must take every CTA launch cycle through dispatch and
// every self-scheduled event through tie (see sm.SM.At and GPU.Run).
type jitter struct {
	rng      *rand.Rand
	dispatch int // largest dispatch offset, cycles
}

// maxTie keeps a tie offset below half a cycle: clock.Clock.Cycle rounds
// to the nearest edge, so a perturbed event still reads its own cycle.
const maxTie = 0.25

// newJitter is run k's perturbation; nil for run 0.
func newJitter(seed uint64, run, dispatch int) *jitter {
	if run == 0 {
		return nil
	}
	src := rand.NewSource(int64(seed*1000003 + uint64(run)))
	return &jitter{rng: rand.New(src), dispatch: dispatch}
}

// dispatchOffset is the extra cycles before a CTA launch starts.
func (j *jitter) dispatchOffset() uint64 {
	if j == nil || j.dispatch <= 0 {
		return 0
	}
	return uint64(j.rng.Intn(j.dispatch + 1))
}

// Tie is the sub-cycle offset of one self-scheduled SM event.
func (j *jitter) Tie() float64 {
	if j == nil {
		return 0
	}
	return j.rng.Float64() * maxTie
}
