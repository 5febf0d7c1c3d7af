package gpu

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/results"
)

// addTranspose runs the launch that copies a column-major B row-major
// ahead of a V:N:M plan that needs it (kernel.Plan.TransposeB): its
// bytes through the modelled L1, crossbar, L2 and DRAM (memory.RunStream,
// cold L2) plus a kernel launch, as the sparsifier's stream kernel is
// timed. Its cycles come before the gather kernel's, its traffic and
// energy events join the result's, and its time joins the breakdown as
// the memory level that bounded it. The copy's load and store
// instructions are counted for energy (one 16-B-per-thread access per
// 512 B each way), not issued through a modelled SM.
func addTranspose(cfg *configs.Config, r *Result) error {
	k := r.Plan.TransposeKernel()
	s, err := memory.RunStream(cfg.Memory, clock.MHz(cfg.GPU.ClockMHz), cfg.GPU.SMCount,
		cfg.Sim.MemoryGranularity, k)
	if err != nil {
		return fmt.Errorf("transpose of B before %s: %w", r.Plan.Name(), err)
	}
	t := s.Cycles + uint64(cfg.SM.KernelLaunchLatency)
	r.Breakdown = joinBreakdown(r.Breakdown, r.Cycles, transposeCause(s), t)
	r.Cycles += t
	r.TransposeCycles = t
	mem := r.Mem
	for i, c := range mem.Counters() {
		*c += *s.Stats.Counters()[i]
	}
	r.Mem = mem
	st := s.Stats
	r.Act = r.Act.Add(energy.Counts{Precision: r.Act.Precision, SMs: r.Act.SMs,
		SM:        energy.SMActivity{Instructions: st.L2Bytes / 512, RFWriteBytes: st.L2Bytes},
		L1Sectors: st.L1HitSectors + st.L1MissSectors, L2Sectors: st.L2HitSectors + st.L2MissSectors,
		CrossbarBytes: st.L2Bytes, DRAMBytes: st.DRAMReadBytes + st.DRAMWriteBytes})
	return nil
}

// transposeCause is the one cause a copy's time goes to, all of it
// tensor-core idle: the level whose busiest server was busy the larger
// share of its cycles, DRAM or L2 bandwidth (a slice or a crossbar port)
// when busy at least half the time, else DRAM latency.
func transposeCause(s memory.StreamResult) results.Breakdown {
	dram := float64(s.Stats.MaxChannelBusy) / float64(max(s.Cycles, 1))
	l2 := float64(max(s.Stats.MaxSliceBusy, s.Stats.MaxPortBusy)) / float64(max(s.Cycles, 1))
	switch {
	case dram >= l2 && dram >= 0.5:
		return results.Breakdown{DRAMBandwidth: 1}
	case l2 >= 0.5:
		return results.Breakdown{L2Bandwidth: 1}
	}
	return results.Breakdown{DRAMLatency: 1}
}

// joinBreakdown is the breakdown of a cycles followed by b cycles.
func joinBreakdown(x results.Breakdown, a uint64, y results.Breakdown, b uint64) results.Breakdown {
	xs, ys := x.Shares(), y.Shares()
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = (xs[i]*float64(a) + ys[i]*float64(b)) / float64(max(a+b, 1))
	}
	return results.BreakdownOf(out)
}
