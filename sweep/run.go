package sweep

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/stcsim/stcsim/configs"
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
// does not hold yet, committing each as it finishes. When ctx is
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
	feed := make(chan Unit)
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range feed {
				if ctx.Err() != nil {
					continue // stopping: start nothing new
				}
				ok, err := runUnit(run, st, p.Modes, u)
				if err != nil {
					fail(err)
					continue
				}
				mu.Lock()
				if ok {
					sum.Ran++
				} else {
					sum.Raced++
				}
				mu.Unlock()
				if opt.Finished != nil {
					opt.Finished(u)
				}
			}
		}()
	}
dispatch:
	for _, u := range todo {
		select {
		case <-ctx.Done():
			break dispatch
		case feed <- u:
		}
	}
	close(feed)
	wg.Wait()
	if firstErr != nil {
		return sum, firstErr
	}
	return sum, ctx.Err()
}

func runUnit(run RunFunc, st *store.Store, modes []tensorcore.Mode, u Unit) (bool, error) {
	ld, err := u.Point.Load()
	if err != nil {
		return false, err
	}
	rep, err := run(ld, sim.Job{
		Workloads: []*workloads.Trace{u.Workload.Trace},
		Modes:     modes,
	})
	if err != nil {
		return false, fmt.Errorf("point %d (%s) workload %s: %w",
			u.Point.Index+1, u.Point.Label(), u.Workload.Trace.Name, err)
	}
	body, _, err := configYAML(ld)
	if err != nil {
		return false, err
	}
	return st.Commit(u.ID(), modes, body, rep)
}
