package sim

import (
	"reflect"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestRetimeFromLockedIsTheSame: AddPowerCapped re-times a locked run's
// kernels above the limit from the locked run's own simulations
// (retimeLocked) rather than selecting the pinned kernel again, which
// simulates it once more at the locked clock. Both give the same
// power-capped totals, on a shape whose selection simulates (and prunes)
// several candidates, dense and sparse, and the re-timing from the locked
// run starts fewer simulations, one fewer per record re-timed. It reads
// the process's warp k-step meter, so it runs in a process of its own.
func TestRetimeFromLockedIsTheSame(t *testing.T) {
	if !aloneInProcess(t) {
		return
	}
	sets := []string{"gpu.sm_count=8", "power.limit_w=45"}
	load := func(more ...string) (*configs.Loaded, error) {
		return configs.Load(nil, append(append([]string{}, sets...), more...))
	}
	ld, err := load()
	if err != nil {
		t.Fatal(err)
	}
	job := gemmJob([3]int{512, 512, 1024})
	p, err := Prepare(ld.Config, job)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(ld)
	if err != nil {
		t.Fatal(err)
	}
	above := 0
	for _, r := range rep.Results {
		if r.AbovePowerLimit {
			above++
		}
	}
	if above != 2 {
		t.Fatalf("%d records above the limit, want both", above)
	}
	retime := func(j Job) ([]results.ClockTotal, uint64) {
		again := *rep
		before := WarpStepsSimulated()
		if err := AddPowerCapped(load, j, &again, nil); err != nil {
			t.Fatal(err)
		}
		return again.PowerCapped, WarpStepsSimulated() - before
	}
	fromLocked, cheap := retime(p.Job)
	plain := p.Job
	plain.locked = nil // the pinned kernel selected again
	again, full := retime(plain)
	if !reflect.DeepEqual(fromLocked, again) {
		t.Errorf("re-timed from the locked run: %+v\nselected again: %+v", fromLocked, again)
	}
	if cheap >= full {
		t.Errorf("re-timing from the locked run simulated %d warp k-steps, selecting again %d", cheap, full)
	}
	t.Logf("warp k-steps: %d from the locked run, %d selecting again", cheap, full)

	// Job.PowerCappedTotals: the re-timings run with the locked run, the same
	// report and totals, and none is left for AddPowerCapped.
	early := job
	early.PowerCappedTotals = true
	pe, err := Prepare(ld.Config, early)
	if err != nil {
		t.Fatal(err)
	}
	before := WarpStepsSimulated()
	repEarly, err := pe.Run(ld)
	if err != nil {
		t.Fatal(err)
	}
	during := WarpStepsSimulated() - before
	if !reflect.DeepEqual(repEarly, rep) {
		t.Errorf("the locked report differs with the early re-timing")
	}
	rep = repEarly
	onTheSide, after := retime(pe.Job)
	if !reflect.DeepEqual(onTheSide, again) {
		t.Errorf("re-timed early: %+v\nselected again: %+v", onTheSide, again)
	}
	if after != 0 || during == 0 {
		t.Errorf("re-timed early: %d warp k-steps with the run, %d after it", during, after)
	}
}

// TestWorkEstimateCountsTheLockedRetiming: a locked run that adds the
// power-capped totals (Job.PowerCappedTotals, as `run`) and whose kernel
// the pre-model puts above power.limit_w is estimated with their
// re-timing (AddPowerCapped), and the estimate stays within 2x of what
// the run and the re-timing simulate (as
// TestWorkEstimateMatchesSimulatedKSteps holds the others); under a
// limit no kernel reaches, the re-timing is not counted and not run,
// and neither is it for a job that does not add the totals (validate,
// sweep). It reads the process's warp k-step meter, so it runs in a
// process of its own.
func TestWorkEstimateCountsTheLockedRetiming(t *testing.T) {
	if !aloneInProcess(t) {
		return
	}
	job := gemmJob([3]int{512, 1024, 2048})
	job.Modes = []tensorcore.Mode{tensorcore.Dense}
	job.PowerCappedTotals = true
	estimate := func(limit string) (float64, float64) {
		sets := []string{"gpu.sm_count=16", "power.limit_w=" + limit}
		load := func(more ...string) (*configs.Loaded, error) {
			return configs.Load(nil, append(append([]string{}, sets...), more...))
		}
		ld, err := load()
		if err != nil {
			t.Fatal(err)
		}
		p := mustPrepare(t, ld.Config, job)
		before := WarpStepsSimulated()
		rep, err := p.Run(ld)
		if err != nil {
			t.Fatal(err)
		}
		if err := AddPowerCapped(load, p.Job, rep, nil); err != nil {
			t.Fatal(err)
		}
		return p.KSteps(), float64(WarpStepsSimulated() - before)
	}
	capped, cappedRun := estimate("90")
	free, freeRun := estimate("1000")
	t.Logf("under 90 W: estimate %.4g, simulated %.4g; under 1000 W: %.4g, %.4g", capped, cappedRun,
		free, freeRun)
	if capped <= free || cappedRun <= freeRun {
		t.Errorf("the re-timing under 90 W: estimate %.4g against %.4g, run %.4g against %.4g",
			capped, free, cappedRun, freeRun)
	}
	if capped > 2*cappedRun || capped < cappedRun/2 {
		t.Errorf("under 90 W: estimate %.4g warp k-steps, simulated %.4g", capped, cappedRun)
	}
	ld, err := configs.Load(nil, []string{"gpu.sm_count=16", "power.limit_w=90"})
	if err != nil {
		t.Fatal(err)
	}
	job.PowerCappedTotals = false
	if w := mustPrepare(t, ld.Config, job).KSteps(); w != free {
		t.Errorf("without the power-capped totals: estimate %.4g under 90 W, want %.4g as under 1000 W", w, free)
	}
}
