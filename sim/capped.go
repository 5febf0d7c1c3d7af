package sim

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/bug"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// AddPowerCapped gives a locked-clock report whose kernels draw more than
// the board's power limit the totals under gpu.clock_policy=power_capped
// too (rep.PowerCapped). Each record above the limit is simulated again
// with load's config under that policy and its kernel pinned
// (kernel.force: the kernel power_capped selects too, as it selects at the
// locked clock), which runs it at the highest clock of the V/f table
// within power.limit_w; the others keep their records, which power_capped
// would not change (a kernel within the limit keeps the locked clock). It
// does nothing when no record is above the limit. load is the run's
// config with extra --set overrides; progress, when set, counts the
// records re-timed.
func AddPowerCapped(load func(sets ...string) (*configs.Loaded, error), job Job, rep *Report,
	progress func(done, total int)) error {
	var above []int
	for i, r := range rep.Results {
		if r.AbovePowerLimit {
			above = append(above, i)
		}
	}
	if len(above) == 0 {
		return nil
	}
	rows := slices.Clone(rep.Results)
	errs := make([]error, len(above))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var caught bug.Catcher // a panic, re-raised here after the wait
	for n, i := range above {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var rec results.LayerResult
			var err error
			caught.Do(func() { rec, err = retimeCapped(load, job, rep.Results[i]) })
			mu.Lock()
			defer mu.Unlock()
			if errs[n] = err; err == nil {
				rows[i] = rec
			}
			if done++; progress != nil {
				progress(done, len(above))
			}
		}()
	}
	wg.Wait()
	caught.Raise()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("power-capped totals: %w", err)
	}
	ld, err := load("gpu.clock_policy=" + energy.PowerCapped)
	if err != nil {
		return fmt.Errorf("power-capped totals: %w", err)
	}
	rep.PowerCapped = cappedTotals(rows, ld.Config.Power.LimitW)
	return nil
}

// retimeCapped simulates one record's GEMM again under power_capped with
// its kernel pinned. Where the locked run kept the record's kernel
// (job.locked), the re-timing starts from it (retimeLocked) rather than
// selecting the pinned kernel again: that selection would simulate it
// once more at the locked clock, to the same result.
func retimeCapped(load func(sets ...string) (*configs.Loaded, error), job Job, r LayerResult) (LayerResult, error) {
	ld, err := load("gpu.clock_policy="+energy.PowerCapped, "kernel.force="+r.Kernel)
	if err != nil {
		return r, err
	}
	sub := job
	sub.Modes, sub.Workloads, sub.Progress = []tensorcore.Mode{r.Mode}, nil, nil
	sub.locked, sub.retime, sub.PowerCappedTotals = nil, job.locked, false
	sub.Observer = nil // --trace-db and --monitor show the reported run's kernels
	for _, t := range job.Workloads {
		if t.Name != r.Workload {
			continue
		}
		for _, g := range t.GEMMs {
			if g.Name == r.Layer {
				sub.Workloads = []*workloads.Trace{t.WithGEMMs([]workloads.GEMM{g})}
			}
		}
	}
	if len(sub.Workloads) == 0 {
		return r, fmt.Errorf("workload %s layer %s: not in the job", r.Workload, r.Layer)
	}
	out, err := Run(ld, sub)
	if err != nil {
		return r, err
	}
	if len(out.Results) != 1 {
		return r, fmt.Errorf("workload %s layer %s: %d records re-timed, want 1",
			r.Workload, r.Layer, len(out.Results))
	}
	return out.Results[0], nil
}

// cappedTotals sums the records per workload and mode, with the range of
// clocks their kernels ran at and the sparse total's speedup.
func cappedTotals(rows []LayerResult, limitW float64) []results.ClockTotal {
	var out []results.ClockTotal
	at := map[[2]string]int{}
	for _, r := range rows {
		k := [2]string{r.Workload, r.Mode.String()}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, results.ClockTotal{Workload: r.Workload, Mode: r.Mode,
				Policy: energy.PowerCapped, LimitW: limitW, MinClockMHz: r.ClockMHz})
		}
		t := &out[i]
		t.TimeUS += r.TimeUS * float64(r.Count)
		t.MinClockMHz = min(t.MinClockMHz, r.ClockMHz)
		t.MaxClockMHz = max(t.MaxClockMHz, r.ClockMHz)
	}
	for i, t := range out {
		if d, ok := at[[2]string{t.Workload, tensorcore.Dense.String()}]; ok && t.Mode == tensorcore.Sparse {
			out[i].Speedup = out[d].TimeUS / t.TimeUS
		}
	}
	return out
}

// lockedKernels are a locked run's kernels whose records are above the
// power limit, by shape (each shape runs one kernel per config), and
// under Job.PowerCappedTotals their re-timings.
type lockedKernels struct {
	mu     sync.Mutex
	by     map[kernel.Shape]*gpu.Result
	capped map[kernel.Shape]*gpu.Result
}

// retimeEarly re-times k, shape s's kernel at the locked clock, where it
// is above power.limit_w (as its record will say: selection.AboveLimit
// is the record's test on one run), and keeps the result for
// AddPowerCapped. The locked config serves: the simulation at a clock
// does not read gpu.clock_policy, and the pinned kernel is k's.
func (r *runner) retimeEarly(s kernel.Shape, k *gpu.Result) error {
	if r.cfg.GPU.ClockPolicy != energy.Locked || k.Fidelity != configs.FidelityInstruction ||
		!selection.AboveLimit(r.cfg, k) {
		return nil
	}
	c, err := retimeLocked(r.cfg, k, nil)
	if err != nil {
		return fmt.Errorf("power-capped re-timing of %s: %w", k.Plan.Name(), err)
	}
	r.job.locked.keepCapped(s, c)
	return nil
}

// keepCapped notes c as shape s's kernel re-timed under power_capped.
func (l *lockedKernels) keepCapped(s kernel.Shape, c *gpu.Result) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.capped == nil {
		l.capped = map[kernel.Shape]*gpu.Result{}
	}
	l.capped[s] = c
}

// cappedOf is shape s's early re-timing, or nil.
func (l *lockedKernels) cappedOf(s kernel.Shape) *gpu.Result {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.capped[s]
}

// keep notes k as shape s's kernel at the locked clock. Only a kernel
// timed at instruction level is kept: a fast-tier record is re-timed
// by the instruction tier, which power_capped needs (fast-paths.md).
func (l *lockedKernels) keep(s kernel.Shape, k *gpu.Result) {
	if l == nil || k == nil || k.Fidelity != configs.FidelityInstruction {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[kernel.Shape]*gpu.Result{}
	}
	l.by[s] = k
}

// of is shape s's kept kernel, or nil.
func (l *lockedKernels) of(s kernel.Shape) *gpu.Result {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.by[s]
}

// retimeLocked is what selection.RunRanked gives under power_capped with
// k's kernel pinned, from k, that kernel's locked-clock run: the pinned
// selection simulates the same plan at the locked clock (deterministic:
// k again) and caps its clock (selection.CapClock), which is all that
// is left to do here. TestRetimeFromLockedIsTheSame holds the two to the
// same totals.
func retimeLocked(cfg *configs.Config, k *gpu.Result, obs gpu.Observer) (*gpu.Result, error) {
	r, err := selection.CapClock(cfg, k, obs)
	if r != nil {
		r.Fidelity = configs.FidelityInstruction
	}
	return r, err
}
