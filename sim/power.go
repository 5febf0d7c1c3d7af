package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// runKernel picks the kernel of a GEMM and runs it under the config's
// clock policy: locked keeps gpu.clock_mhz; power_capped re-times the
// chosen kernel at the highest clock of the V/f table that keeps its
// average power within power.limit_w.
func runKernel(cfg *configs.Config, g kernel.Shape, obs Observer) (*gpu.Result, error) {
	k, err := selectKernel(cfg, g, obs)
	if err != nil || cfg.GPU.ClockPolicy != energy.PowerCapped {
		return k, err
	}
	return capClock(cfg, k, obs)
}

// capClock finds the highest clock at which the kernel's simulated power
// fits the limit, re-simulating the kernel at each clock it tries.
func capClock(cfg *configs.Config, k *gpu.Result, obs Observer) (*gpu.Result, error) {
	pw := cfg.Power
	if kernelPower(cfg, k) <= pw.LimitW {
		return k, nil
	}
	clocks := pw.Clocks(cfg.GPU.ClockMHz)
	runs := map[int]*gpu.Result{cfg.GPU.ClockMHz: k}
	fits := func(mhz int) (bool, error) {
		r, ok := runs[mhz]
		if !ok {
			var err error
			if r, err = gpu.Simulate(cfgAt(cfg, mhz), k.Plan, obs); err != nil {
				return false, err
			}
			runs[mhz] = r
		}
		return kernelPower(cfg, r) <= pw.LimitW, nil
	}
	start := pw.PredictClock(k.Act, k.Cycles, clocks)
	mhz, ok, err := energy.HighestFitting(clocks, start, fits)
	if err != nil {
		return nil, err
	}
	r := runs[mhz]
	// The re-timed kernel is one unperturbed run at the capped clock
	// (no jitter ensemble there); the selection's candidates stay.
	r.Candidates = k.Candidates
	if !ok {
		r.PowerNote = fmt.Sprintf("above power.limit_w %.0f W even at "+
			"the lowest clock, %d MHz", pw.LimitW, mhz)
	}
	return r, nil
}

// kernelPower is a kernel's average board power in watts.
func kernelPower(cfg *configs.Config, k *gpu.Result) float64 {
	b, err := cfg.Power.Energy(k.Act, k.Cycles, k.ClockMHz)
	if err != nil {
		return 0
	}
	return energy.Power(b.Total(), k.Cycles, k.ClockMHz)
}

// cfgAt is the config with the SM clock at mhz. The memory clock domains
// stay: DRAM bandwidth is in GB/s already, and the part of the DRAM
// latency beyond an L2 hit keeps its time in nanoseconds (L2 and the
// crossbar run on the SM clock and keep their cycles).
func cfgAt(cfg *configs.Config, mhz int) *configs.Config {
	c := *cfg
	c.GPU.ClockMHz = mhz
	l2 := float64(c.Memory.L2.NearLatency+c.Memory.L2.FarLatency) / 2
	beyond := float64(c.Memory.DRAM.Latency) - l2
	// At very low clocks the scaled latency would undercut the far L2
	// hit that every DRAM access includes.
	c.Memory.DRAM.Latency = max(c.Memory.L2.FarLatency, int(l2+
		beyond*float64(mhz)/float64(cfg.GPU.ClockMHz)+0.5))
	return &c
}

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
