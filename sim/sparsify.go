package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// The sparsifier as a stream kernel: each SM keeps sparsifierInFlight
// chunks of sparsifierChunk bytes of X in flight (a CTA's 64 x 32 fp16
// tile is 4 KiB), as the memory microbenchmark's streaming kernel does.
const (
	sparsifierChunk    = 4096
	sparsifierInFlight = 8
)

// sparsifierRecords times every sparsifier kernel of the job's workloads
// (workloads.Trace.Training) for the sparse mode: X's bytes in, its
// compressed values and metadata out (twice with both forms), through
// the modelled L1, crossbar, L2 and DRAM (memory.RunStream), plus a
// kernel launch. The dense step sparsifies nothing, so there is no dense
// record.
func (r *runner) sparsifierRecords() ([]LayerResult, error) {
	if !r.runsSparse() {
		return nil, nil
	}
	var out []LayerResult
	for _, t := range r.job.Workloads {
		for _, s := range t.Sparsifiers {
			rec, err := r.sparsifierRecord(t.Name, s)
			if err != nil {
				return nil, fmt.Errorf("workload %s: sparsifier %s: %w", t.Name, s.Name, err)
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

func (r *runner) runsSparse() bool {
	for _, m := range r.job.Modes {
		if m == tensorcore.Sparse {
			return true
		}
	}
	return false
}

// SparsifierKernel is the traffic of a sparsifier: X's bytes read, and
// for each compressed form (X, and X^T when Transposed) its values (N of
// every M elements) and metadata (MetadataBits per kept value).
func SparsifierKernel(s workloads.Sparsifier) (memory.StreamKernel, error) {
	prec, err := tensorcore.ParsePrecision(s.Precision)
	if err != nil {
		return memory.StreamKernel{}, err
	}
	p, err := tensorcore.ParsePattern(s.Pattern)
	if err != nil {
		return memory.StreamKernel{}, err
	}
	elems := uint64(s.Rows) * uint64(s.Cols) * uint64(max(s.Batch, 1))
	kept := uint64(p.Kept(int(elems)))
	k := memory.StreamKernel{InBytes: elems * uint64(prec.ElementBytes()),
		InClass: memory.BOperand, Chunk: sparsifierChunk, InFlight: sparsifierInFlight,
		Outs: []memory.StreamOut{
			{Class: memory.AValues, Bytes: kept * uint64(prec.ElementBytes())},
			{Class: memory.AMeta, Bytes: (kept*uint64(p.MetadataBits()) + 7) / 8}}}
	if s.Transposed {
		k.Outs = append(k.Outs, k.Outs...)
	}
	return k, nil
}

func (r *runner) sparsifierRecord(workload string, s workloads.Sparsifier) (LayerResult, error) {
	k, err := SparsifierKernel(s)
	if err != nil {
		return LayerResult{}, err
	}
	cfg := r.cfg
	res, err := memory.RunStream(cfg.Memory, clock.MHz(cfg.GPU.ClockMHz), cfg.GPU.SMCount,
		cfg.Sim.MemoryGranularity, k)
	if err != nil {
		return LayerResult{}, err
	}
	cycles := res.Cycles + uint64(cfg.SM.KernelLaunchLatency)
	sec := float64(cycles) / (float64(cfg.GPU.ClockMHz) * 1e6)
	prec, _ := tensorcore.ParsePrecision(s.Precision)
	forms := "X"
	if s.Transposed {
		forms = "X and X^T"
	}
	rec := LayerResult{Workload: workload, Layer: s.Name, M: s.Rows, N: s.Cols,
		K: 1, Batch: max(s.Batch, 1), Precision: prec, Mode: tensorcore.Sparse,
		SparseApplied: true, Pattern: s.Pattern, SparseOperand: workloads.OperandActivations,
		Pass: workloads.RoleOverhead, Count: max(s.Count, 1), Kernel: "sparsify_" + s.Pattern,
		Cycles: cycles, TimeUS: sec * 1e6, Breakdown: streamBreakdown(res.Stats, res.Cycles),
		SparseAlong: fmt.Sprintf("%s of %s", forms, s.For), Fidelity: "memory stream"}
	rec.Bound = rec.Breakdown.Bound()
	st := res.Stats
	rec.DRAMReadBytes, rec.DRAMWriteBytes = st.DRAMReadBytes, st.DRAMWriteBytes
	rec.DRAMGBps = float64(st.DRAMReadBytes+st.DRAMWriteBytes) / sec / 1e9
	rec.L2HitRate, rec.MetadataBytes, rec.L2Bytes = st.L2HitRate(), st.MetadataBytes(), st.L2Bytes
	head := fmt.Sprintf("activation sparsifier: reads X (%d x %d), writes the %s "+
		"values and metadata of %s for %s; its bytes through L1, crossbar, L2 and "+
		"DRAM (cold L2), the SMs' compare-and-select not simulated", s.Rows, s.Cols,
		s.Pattern, forms, s.For)
	r.applyPower(&rec, powerInputs{Act: streamActivity(cfg.GPU.SMCount, st),
		ClockMHz: cfg.GPU.ClockMHz, NoteHead: head})
	return rec, nil
}

// streamBreakdown attributes a stream kernel's time, all of it tensor-core
// idle, to one cause: the level whose busiest server was busy the
// largest share of its cycles, DRAM or L2 bandwidth (an L2 slice or
// crossbar port) when that server was busy at least half the time, else
// DRAM latency (too few bytes in flight to fill either).
func streamBreakdown(st memory.Stats, cycles uint64) Breakdown {
	dram := float64(st.MaxChannelBusy) / float64(max(cycles, 1))
	l2 := float64(max(st.MaxSliceBusy, st.MaxPortBusy)) / float64(max(cycles, 1))
	switch {
	case dram >= l2 && dram >= 0.5:
		return Breakdown{DRAMBandwidth: 1}
	case l2 >= 0.5:
		return Breakdown{L2Bandwidth: 1}
	}
	return Breakdown{DRAMLatency: 1}
}

// streamActivity is a stream kernel's energy events: its L1 and L2
// sectors, crossbar and DRAM bytes, and one 16-B-per-thread load or
// store instruction per 512 B, each moving its bytes through registers.
func streamActivity(sms int, st memory.Stats) energy.Counts {
	insts := st.L2Bytes / 512
	return energy.Counts{Precision: tensorcore.FP16, SMs: sms,
		SM:        energy.SMActivity{Instructions: insts, RFWriteBytes: st.L2Bytes},
		L1Sectors: st.L1HitSectors + st.L1MissSectors,
		L2Sectors: st.L2HitSectors + st.L2MissSectors, CrossbarBytes: st.L2Bytes,
		DRAMBytes: st.DRAMReadBytes + st.DRAMWriteBytes}
}
