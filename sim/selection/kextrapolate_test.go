package selection

import (
	"testing"

	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
)

// A K fit whose cycle line is flatter than its tensor-core line (the
// first sample spent its time queueing) is raised to the tensor cores'
// time for the k-steps it adds, so the extended kernel never runs above
// its peak; a steady fit is left as it is.
func TestKFitBoundedByTensorCores(t *testing.T) {
	p := &kernel.Plan{KSteps: KSamples[1] + 2*(KSamples[1]-KSamples[0])}
	a := &gpu.Result{Cycles: 10000, TCBusy: 20000, TCUnits: 4}
	b := &gpu.Result{Cycles: 12000, TCBusy: 40000, TCUnits: 4}
	r := extendInK(p, a, b)
	if util := float64(r.TCBusy) / float64(r.Cycles*uint64(r.TCUnits)); util > 1 || !r.KBounded {
		t.Errorf("busy %d over %d cycles x 4: utilization %.3f, bounded %v", r.TCBusy, r.Cycles, util, r.KBounded)
	}
	if r.Cycles != 12000+(80000-40000)/4 {
		t.Errorf("cycles %d, want the second sample plus the added busy time over 4 units (22000)", r.Cycles)
	}
	steady := extendInK(p, &gpu.Result{Cycles: 10000, TCBusy: 20000, TCUnits: 4},
		&gpu.Result{Cycles: 20000, TCBusy: 40000, TCUnits: 4})
	if steady.KBounded || steady.Cycles != 40000 {
		t.Errorf("a steady fit: %d cycles, bounded %v; want 40000 as fitted", steady.Cycles, steady.KBounded)
	}
}
