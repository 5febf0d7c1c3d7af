package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestBudgetListsWhatSelectionSimulates: the simulations BudgetOf lists
// for a shape (the samples of every candidate, and the record of the one
// chosen) are the simulations RunRanked starts, counted where they start
// (simulate), over the schedules of the selection: a whole-K sample
// that is the record, wave extrapolation on and off, a sample too short
// in waves to be extrapolated, a long-K kernel fitted in K or simulated
// whole, a jitter ensemble and the fast tier. Not parallel: the counter
// is the package's (parallel tests run after this one).
func TestBudgetListsWhatSelectionSimulates(t *testing.T) {
	for _, c := range []struct {
		m, n, k int
		sparse  bool
		set     []string
	}{
		{256, 256, 256, false, nil},
		{256, 256, 256, true, []string{"sim.extrapolate_waves=false"}},
		{1024, 1024, 128, false, nil}, // 8 waves on 4 SMs: samples extrapolated
		{1024, 1024, 128, false, []string{"sim.extrapolate_waves=false"}},
		{128, 128, 8192, true, nil}, // long in K: two K samples, the record fitted
		{128, 128, 8192, false, []string{"sim.extrapolate_ksteps=false", "kernel.split_k=[1]"}},
		{256, 128, 512, false, []string{"sim.jitter_runs=2"}},
		{512, 512, 512, false, []string{"sim.fidelity=fast"}},
	} {
		ld, err := configs.Load(nil, append([]string{"gpu.sm_count=4"}, c.set...))
		if err != nil {
			t.Fatal(err)
		}
		cfg := ld.Config
		g := kernel.Shape{M: c.m, N: c.n, K: c.k, Batch: 1, Precision: tensorcore.FP16, Sparse: c.sparse}
		plans, _ := Rank(cfg, g)
		b := BudgetOf(cfg, plans)
		before := simulations.Load()
		r, err := RunRanked(cfg, g, plans, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := simulations.Load() - before
		want := runsOf(b.Samples)
		for i, p := range plans[:len(b.Records)] { // none on the fast tier
			if p.Name() == r.Plan.Name() {
				want += runsOf(b.Records[i])
			}
		}
		if got != want {
			t.Errorf("%dx%dx%d sparse=%v %v: the selection ran %d simulations, its budget lists %d",
				c.m, c.n, c.k, c.sparse, c.set, got, want)
		}
		if b.Fast != (got == 0) {
			t.Errorf("%dx%dx%d %v: fast budget %v, %d simulations", c.m, c.n, c.k, c.set, b.Fast, got)
		}
	}
}

// runsOf is the runs of a list of simulations.
func runsOf(sims []Sim) int64 {
	var n int64
	for _, s := range sims {
		n += int64(s.Runs)
	}
	return n
}
