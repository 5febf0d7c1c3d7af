package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// AddPowerCapped gives a locked-clock report whose kernels draw more than
// the board's power limit the totals under gpu.clock_policy=power_capped
// too (rep.PowerCapped): the records above the limit are simulated again
// with capped, the run's config with that policy (each at the highest
// clock of the V/f table within power.limit_w; the same kernel selection),
// and the others keep their records, which power_capped would not change
// (a kernel within the limit keeps the locked clock). It does nothing
// when no record is above the limit. progress, when set, follows the
// re-run as Job.Progress does.
func AddPowerCapped(capped *configs.Loaded, job Job, rep *Report, progress func(done, total int)) error {
	if capped.Config.GPU.ClockPolicy != energy.PowerCapped {
		return fmt.Errorf("power-capped totals: the config's gpu.clock_policy is %s, want %s",
			capped.Config.GPU.ClockPolicy, energy.PowerCapped)
	}
	type key struct {
		w, l string
		m    tensorcore.Mode
	}
	above := map[key]bool{}
	for _, r := range rep.Results {
		if r.AbovePowerLimit {
			above[key{r.Workload, r.Layer, r.Mode}] = true
		}
	}
	if len(above) == 0 {
		return nil
	}
	recs := map[key]LayerResult{}
	for _, m := range job.Modes {
		sub := job
		sub.Modes, sub.Workloads, sub.Progress = []tensorcore.Mode{m}, nil, progress
		sub.Observer = nil // --trace-db and --monitor show the reported run's kernels
		for _, t := range job.Workloads {
			var rows []workloads.GEMM
			for _, g := range t.GEMMs {
				if above[key{t.Name, g.Name, m}] {
					rows = append(rows, g)
				}
			}
			if len(rows) > 0 {
				sub.Workloads = append(sub.Workloads, t.WithGEMMs(rows))
			}
		}
		if len(sub.Workloads) == 0 {
			continue
		}
		r, err := Run(capped, sub)
		if err != nil {
			return fmt.Errorf("power-capped totals: %w", err)
		}
		for _, rec := range r.Results {
			recs[key{rec.Workload, rec.Layer, rec.Mode}] = rec
		}
	}
	rows := make([]LayerResult, len(rep.Results))
	for i, r := range rep.Results {
		rows[i] = r
		if c, ok := recs[key{r.Workload, r.Layer, r.Mode}]; ok {
			rows[i] = c
		}
	}
	rep.PowerCapped = cappedTotals(rows, capped.Config.Power.LimitW)
	return nil
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
