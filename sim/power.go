package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/tensorcore"
)

// power is a kernel's record fields: its clock, energy and power.
// The static classes run for the record's cycles (the ensemble mean with
// sim.jitter_runs > 1), the event classes are run 0's counts.
func (r *runner) power(k *gpu.Result) Power {
	cycles, _, _ := ensembleCycles(k)
	b, err := r.cfg.Power.Energy(k.Act, cycles, k.ClockMHz)
	if err != nil { // every valid precision has an MMA energy
		panic(fmt.Sprintf("energy of %s: %v", k.Plan.Name(), err))
	}
	uj := b.Total()
	return Power{ClockMHz: k.ClockMHz, EnergyUJ: uj, Energy: b,
		AvgPowerW: energy.Power(uj, cycles, k.ClockMHz)}
}

// addEnergySavings fills each sparse record's and total's energy saving
// over the dense one of the same layer or workload, and the totals'
// energy (energy x count over the layers) and average power.
func addEnergySavings(rep *Report) {
	type key struct{ w, l string }
	dense := map[key]float64{}
	type wm struct {
		w string
		m tensorcore.Mode
	}
	sums := map[wm]energy.Breakdown{}
	for _, r := range rep.Results {
		if r.Mode == tensorcore.Dense {
			dense[key{r.Workload, r.Layer}] = r.EnergyUJ
		}
		k := wm{r.Workload, r.Mode}
		sums[k] = sums[k].Plus(r.Energy.Scale(float64(r.Count)))
	}
	for i, r := range rep.Results {
		if d, ok := dense[key{r.Workload, r.Layer}]; ok && r.Mode == tensorcore.Sparse {
			rep.Results[i].EnergySaving = d / r.EnergyUJ
		}
	}
	for i, t := range rep.Totals {
		b := sums[wm{t.Workload, t.Mode}]
		tp := TotalPower{EnergyUJ: b.Total(), Energy: b}
		if t.TimeUS > 0 {
			tp.AvgPowerW = tp.EnergyUJ / t.TimeUS
		}
		if d, ok := sums[wm{t.Workload, tensorcore.Dense}]; ok && t.Mode == tensorcore.Sparse {
			tp.EnergySaving = d.Total() / tp.EnergyUJ
		}
		rep.Totals[i].TotalPower = tp
	}
}
