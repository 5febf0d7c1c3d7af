package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/tensorcore"
)

// PowerPoint is one line of the power microbenchmark: a kernel's average
// board power at gpu.clock_mhz, and the clock and power it would have
// under power_capped.
type PowerPoint struct {
	Kernel    string           `json:"kernel"`
	ClockMHz  int              `json:"clock_mhz"`
	PowerW    float64          `json:"power_w"`
	Energy    energy.Breakdown `json:"energy_uj"`
	CycleTime float64          `json:"time_us"`
	// CappedMHz and CappedW: the highest clock of the V/f table within
	// power.limit_w, and the power there.
	CappedMHz int     `json:"capped_clock_mhz"`
	CappedW   float64 `json:"capped_power_w"`
}

// MicroPower runs the power microbenchmark: a tensor-core-bound kernel
// (stcsim micro tc's throughput run: every tensor core busy with
// independent fp16 MMAs on register operands), dense and sparse; the DRAM
// bandwidth benchmark's streaming kernel; and the idle board.
func MicroPower(cfg *configs.Config) ([]PowerPoint, error) {
	var out []PowerPoint
	for _, m := range []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse} {
		n, cycles, err := tcBoundCounts(cfg, tensorcore.FP16, m)
		if err != nil {
			return nil, err
		}
		out = append(out, powerPoint(cfg, fmt.Sprintf("tc-%s-fp16", m), n, cycles))
	}
	n, cycles, err := streamCounts(cfg)
	if err != nil {
		return nil, err
	}
	out = append(out, powerPoint(cfg, "dram-stream", n, cycles))
	idle := energy.Counts{Precision: tensorcore.FP16, SMs: cfg.GPU.SMCount}
	out = append(out, powerPoint(cfg, "idle", idle, uint64(cfg.GPU.ClockMHz)*1000))
	return out, nil
}

// powerPoint evaluates counts measured over cycles at gpu.clock_mhz. The
// kernels here keep their cycle count at any clock (no memory latency in
// the tensor-core run; the streaming run is scaled), so the capped clock
// is found on the same counts.
func powerPoint(cfg *configs.Config, name string, n energy.Counts, cycles uint64) PowerPoint {
	pw := cfg.Power
	f0 := cfg.GPU.ClockMHz
	b, _ := pw.Energy(n, cycles, f0)
	p := PowerPoint{Kernel: name, ClockMHz: f0, Energy: b,
		PowerW: energy.Power(b.Total(), cycles, f0), CycleTime: float64(cycles) / float64(f0)}
	clocks := pw.Clocks(f0)
	at := func(mhz int) uint64 { return cycles }
	if name == "dram-stream" { // DRAM-bound: the time stays, the cycles follow the clock
		at = func(mhz int) uint64 { return cycles * uint64(mhz) / uint64(f0) }
	}
	for _, f := range clocks {
		c := at(f)
		cb, _ := pw.Energy(n, c, f)
		p.CappedMHz, p.CappedW = f, energy.Power(cb.Total(), c, f)
		if p.CappedW <= pw.LimitW {
			break
		}
	}
	return p
}

// tcBoundCounts runs the tensor-core throughput microbenchmark and counts
// its events: the MMAs, their register-file operands and their issue.
func tcBoundCounts(cfg *configs.Config, prec tensorcore.Precision, m tensorcore.Mode) (energy.Counts, uint64, error) {
	r, err := tensorcore.MicroTC(cfg.TensorCore, cfg.GPU.SMCount,
		cfg.SM.SubPartitions, cfg.GPU.ClockMHz, prec, m)
	if err != nil {
		return energy.Counts{}, 0, err
	}
	p, _ := cfg.TensorCore.Get(prec)
	sh, err := tensorcore.ParseShape(p.DenseShape)
	if err != nil {
		return energy.Counts{}, 0, err
	}
	kept := tensorcore.Pattern{N: 1, M: 1}
	if m == tensorcore.Sparse {
		if kept, err = tensorcore.ParsePattern(p.SparsePattern); err != nil {
			return energy.Counts{}, 0, err
		}
		if sh, err = tensorcore.SparseShape(sh, kept); err != nil {
			return energy.Counts{}, 0, err
		}
	}
	mmas := uint64(r.MMAsPerTC * r.TensorCores)
	fmas := mmas * uint64(sh.FMAs()*kept.N/kept.M)
	read, write := energy.MMARegisterBytes(sh.M, sh.N, sh.K,
		prec.ElementBytes(), kept.N, kept.M, m == tensorcore.Sparse)
	n := energy.Counts{Precision: prec, SMs: cfg.GPU.SMCount,
		SM: energy.SMActivity{Instructions: mmas, RFReadBytes: mmas * read,
			RFWriteBytes: mmas * write}}
	if m == tensorcore.Sparse {
		n.SparseMMAs, n.SparseFMAs = mmas, fmas
	} else {
		n.DenseMMAs, n.DenseFMAs = mmas, fmas
	}
	return n, r.ThroughputCycles, nil
}

// streamCounts runs the DRAM streaming kernel and counts its events: its
// L2 sectors, crossbar and DRAM bytes, and one 16-B-per-thread load
// instruction per 512 B, each writing its bytes into registers.
func streamCounts(cfg *configs.Config) (energy.Counts, uint64, error) {
	cycles, st, err := memory.StreamDRAM(cfg.Memory, clock.MHz(cfg.GPU.ClockMHz),
		cfg.GPU.SMCount)
	if err != nil {
		return energy.Counts{}, 0, err
	}
	loads := st.L2Bytes / 512
	return energy.Counts{Precision: tensorcore.FP16, SMs: cfg.GPU.SMCount,
		SM:        energy.SMActivity{Instructions: loads, RFWriteBytes: st.L2Bytes},
		L1Sectors: st.L1HitSectors + st.L1MissSectors,
		L2Sectors: st.L2HitSectors + st.L2MissSectors, CrossbarBytes: st.L2Bytes,
		DRAMBytes: st.DRAMReadBytes + st.DRAMWriteBytes}, cycles, nil
}
