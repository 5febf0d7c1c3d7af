package sweep

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/bug"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/workloads"

	"github.com/stcsim/stcsim/tensorcore"
)

// RunFunc simulates one job on an effective config: sim.Run, or a fake in
// tests.
type RunFunc func(ld *configs.Loaded, job sim.Job) (*sim.Report, error)

// Options control how a plan runs.
type Options struct {
	// Jobs is how many units run at once; runtime.NumCPU() when < 1.
	Jobs int
	// Shard selects this process's share of the units (zero: all).
	Shard Shard
	// Run simulates a unit; sim.Run when nil.
	Run RunFunc
	// Started, when set, is called once with the number of units this run
	// will simulate (after skipping finished ones).
	Started func(todo, skipped int)
	// Finished, when set, is called after each unit is committed.
	Finished func(u Unit)
}

// Summary says what a run did.
type Summary struct {
	Units   int // units in this shard
	Skipped int // already in the store before the run
	Ran     int // simulated and committed by this run
	Raced   int // simulated, but another writer committed them first
}

// Run simulates every unit of the plan (or of its shard) that the store
// does not hold yet, committing each once it and every unit before it in
// the plan have finished (the store's rows do not depend on the number
// of jobs or on which finished first). When ctx is
// cancelled, no new unit starts; units in flight finish and commit. The
// first simulation or store error stops the run the same way and is
// returned.
func Run(ctx context.Context, p *Plan, st *store.Store, opt Options) (Summary, error) {
	units := opt.Shard.Select(p.Units())
	sum := Summary{Units: len(units)}
	var todo []Unit
	for _, u := range units {
		done, err := st.Done(u.ID(), p.Modes)
		if err != nil {
			return sum, err
		}
		if done {
			sum.Skipped++
			continue
		}
		todo = append(todo, u)
	}
	if opt.Started != nil {
		opt.Started(len(todo), sum.Skipped)
	}
	run := opt.Run
	if run == nil {
		run = sim.Run
	}
	jobs := opt.Jobs
	if jobs < 1 {
		jobs = runtime.NumCPU()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	// Units simulate in parallel but commit in the plan's order, so that
	// a store written with any number of jobs holds the same rows in the
	// same order, byte for byte: a unit that finishes early waits for the
	// ones before it (a failed or skipped one is passed over).
	type outcome struct {
		sim  *simulated
		done bool
	}
	out := make([]outcome, len(todo))
	next := 0
	finish := func(i int, r *simulated) {
		mu.Lock()
		defer mu.Unlock()
		out[i] = outcome{sim: r, done: true}
		for ; next < len(out) && out[next].done; next++ {
			r := out[next].sim
			out[next].sim = nil
			if r == nil {
				continue
			}
			ok, err := st.Commit(r.unit.ID(), p.Modes, r.config, r.rep)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				cancel()
				continue
			}
			if ok {
				sum.Ran++
			} else {
				sum.Raced++
			}
			if opt.Finished != nil {
				opt.Finished(r.unit)
			}
		}
	}
	feed := make(chan int)
	var caught bug.Catcher // a unit's panic, re-raised here after the wait
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range feed {
				if ctx.Err() != nil {
					finish(i, nil) // stopping: start nothing new
					continue
				}
				var r *simulated
				var err error
				if !caught.Do(func() { r, err = simulateUnit(run, p.Modes, todo[i]) }) {
					cancel() // a bug: start nothing new, re-raise after the wait
				}
				if err != nil {
					fail(err)
				}
				finish(i, r)
			}
		}()
	}
dispatch:
	for i := range todo {
		select {
		case <-ctx.Done():
			break dispatch
		case feed <- i:
		}
	}
	close(feed)
	wg.Wait()
	caught.Raise()
	if firstErr != nil {
		return sum, firstErr
	}
	return sum, ctx.Err()
}

// simulated is a unit's simulation, ready to commit.
type simulated struct {
	unit   Unit
	config []byte
	rep    *sim.Report
}

// simulateUnit runs one unit; nil with the error when it fails.
func simulateUnit(run RunFunc, modes []tensorcore.Mode, u Unit) (*simulated, error) {
	ld, err := u.Point.Load()
	if err != nil {
		return nil, err
	}
	rep, err := run(ld, sim.Job{
		Workloads: []*workloads.Trace{u.Workload.Trace},
		Modes:     modes,
	})
	if err != nil {
		return nil, fmt.Errorf("point %d (%s) workload %s: %w",
			u.Point.Index+1, u.Point.Label(), u.Workload.Trace.Name, err)
	}
	body, _, err := configYAML(ld)
	if err != nil {
		return nil, err
	}
	return &simulated{unit: u, config: body, rep: rep}, nil
}
