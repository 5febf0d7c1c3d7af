package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// runKernel picks the kernel of a GEMM and runs it under the config's
// clock policy: locked keeps gpu.clock_mhz; power_capped re-times the
// chosen kernel at the highest clock of the V/f table that keeps its
// average power within power.limit_w.
func runKernel(cfg *configs.Config, g kernel.Shape, obs Observer) (*kernelResult, error) {
	k, err := selectKernel(cfg, g, obs)
	if err != nil || cfg.GPU.ClockPolicy != energy.PowerCapped {
		return k, err
	}
	return capClock(cfg, k, obs)
}

// capClock finds the highest clock at which the kernel's simulated power
// fits the limit, re-simulating the kernel at each clock it tries.
func capClock(cfg *configs.Config, k *kernelResult, obs Observer) (*kernelResult, error) {
	pw := cfg.Power
	if kernelPower(cfg, k) <= pw.LimitW {
		return k, nil
	}
	clocks := pw.Clocks(cfg.GPU.ClockMHz)
	runs := map[int]*kernelResult{cfg.GPU.ClockMHz: k}
	fits := func(mhz int) (bool, error) {
		r, ok := runs[mhz]
		if !ok {
			var err error
			if r, err = simulateKernel(cfgAt(cfg, mhz), k.plan, obs); err != nil {
				return false, err
			}
			runs[mhz] = r
		}
		return kernelPower(cfg, r) <= pw.LimitW, nil
	}
	start := pw.PredictClock(k.act, k.cycles, clocks)
	mhz, ok, err := energy.HighestFitting(clocks, start, fits)
	if err != nil {
		return nil, err
	}
	r := runs[mhz]
	// The re-timed kernel is one unperturbed run at the capped clock
	// (no jitter ensemble there); the selection's candidates stay.
	r.candidates = k.candidates
	if !ok {
		r.powerNote = fmt.Sprintf("above power.limit_w %.0f W even at "+
			"the lowest clock, %d MHz", pw.LimitW, mhz)
	}
	return r, nil
}

// kernelPower is a kernel's average board power in watts.
func kernelPower(cfg *configs.Config, k *kernelResult) float64 {
	b, err := cfg.Power.Energy(k.act, k.cycles, k.clockMHz)
	if err != nil {
		return 0
	}
	return energy.Power(b.Total(), k.cycles, k.clockMHz)
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

// activity are the energy model's counts of a finished simulation: the
// tensor cores' and shared memories' own counts, and the memory
// hierarchy's (already extended to the whole kernel when only the first
// waves ran); the tensor-core and shared-memory counts of an extrapolated
// run scale by CTAs, since every CTA does the same work there.
func (g *gpu) activity(r *kernelResult) energy.Counts {
	n := g.smActivity()
	if r.extrapolated && g.doneCTAs > 0 {
		n = scaleCTAs(n, g.plan.CTAs, g.doneCTAs)
	}
	m := r.mem
	n.L1Sectors = m.L1HitSectors + m.L1MissSectors
	n.L2Sectors = m.L2HitSectors + m.L2MissSectors
	n.CrossbarBytes = m.L2Bytes
	n.DRAMBytes = m.DRAMReadBytes + m.DRAMWriteBytes
	return n
}

// smActivity is the energy model's SM-side event counts so far: MMAs and
// FMAs, bank-array wavefronts, instructions and register-file traffic.
func (g *gpu) smActivity() energy.Counts {
	n := energy.Counts{Precision: g.plan.Shape.Precision, SMs: len(g.sms)}
	for _, sm := range g.sms {
		n.SmemWavefronts += sm.Smem.Stats().Wavefronts
		for _, tc := range sm.TCs {
			s := tc.Stats()
			n.DenseMMAs += s.Dense.Instructions
			n.SparseMMAs += s.Sparse.Instructions
			n.DenseFMAs += s.Dense.ActualFMAs
			n.SparseFMAs += s.Sparse.ActualFMAs
		}
	}
	// What the warps issued: every instruction, the register file's reads
	// (less the A fragments the reuse cache kept) and its writes (loads,
	// ALU results, accumulators).
	n.SM = energy.SMActivity{Instructions: g.Issued, RFReadBytes: g.RFRead,
		RFWriteBytes: g.RFWrite}
	return n
}

// scaleCTAs extends the per-CTA counts of done CTAs to all CTAs.
func scaleCTAs(n energy.Counts, all, done int) energy.Counts {
	f := func(v uint64) uint64 { return v * uint64(all) / uint64(done) }
	n.DenseMMAs, n.SparseMMAs = f(n.DenseMMAs), f(n.SparseMMAs)
	n.DenseFMAs, n.SparseFMAs = f(n.DenseFMAs), f(n.SparseFMAs)
	n.SmemWavefronts = f(n.SmemWavefronts)
	n.SM = energy.SMActivity{Instructions: f(n.SM.Instructions),
		RFReadBytes: f(n.SM.RFReadBytes), RFWriteBytes: f(n.SM.RFWriteBytes)}
	return n
}

// power is a kernel's record fields: its clock, energy and power.
// The static classes run for the record's cycles (the ensemble mean with
// sim.jitter_runs > 1), the event classes are run 0's counts.
func (r *runner) power(k *kernelResult) Power {
	cycles, _, _ := ensembleCycles(k)
	b, err := r.cfg.Power.Energy(k.act, cycles, k.clockMHz)
	if err != nil { // every valid precision has an MMA energy
		panic(fmt.Sprintf("energy of %s: %v", k.plan.Name(), err))
	}
	uj := b.Total()
	return Power{ClockMHz: k.clockMHz, EnergyUJ: uj, Energy: b,
		AvgPowerW: energy.Power(uj, cycles, k.clockMHz)}
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
