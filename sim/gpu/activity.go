package gpu

import (
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim/internal/isa"
)

// warpLanes are the threads of a warp instruction: every lane of the
// GEMV's warps runs each FP32-pipe instruction (no divergence).
const warpLanes = 32

// activity are the energy model's counts of a finished simulation: the
// tensor cores' and shared memories' own counts, and the memory
// hierarchy's (already extended to the whole kernel when only the first
// waves ran); the tensor-core and shared-memory counts of an extrapolated
// run scale by CTAs, since every CTA does the same work there.
func (g *GPU) activity(r *Result) energy.Counts {
	n := g.smActivity()
	if r.Extrapolated && g.doneCTAs > 0 {
		n = scaleCTAs(n, g.plan.CTAs, g.doneCTAs)
	}
	m := r.Mem
	n.L1Sectors = m.L1HitSectors + m.L1MissSectors
	n.L2Sectors = m.L2HitSectors + m.L2MissSectors
	n.CrossbarBytes = m.L2Bytes
	n.DRAMBytes = m.DRAMReadBytes + m.DRAMWriteBytes
	return n
}

// smActivity is the energy model's SM-side event counts so far: MMAs and
// FMAs, bank-array wavefronts, instructions, register-file traffic and
// the FP32 pipe's thread operations.
func (g *GPU) smActivity() energy.Counts {
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
		RFWriteBytes: g.RFWrite, FP32Ops: g.IssuedOp[isa.OpFMA] * warpLanes}
	return n
}

// scaleCTAs extends the per-CTA counts of done CTAs to all CTAs.
func scaleCTAs(n energy.Counts, all, done int) energy.Counts {
	f := func(v uint64) uint64 { return v * uint64(all) / uint64(done) }
	n.DenseMMAs, n.SparseMMAs = f(n.DenseMMAs), f(n.SparseMMAs)
	n.DenseFMAs, n.SparseFMAs = f(n.DenseFMAs), f(n.SparseFMAs)
	n.SmemWavefronts = f(n.SmemWavefronts)
	n.SM = energy.SMActivity{Instructions: f(n.SM.Instructions),
		RFReadBytes: f(n.SM.RFReadBytes), RFWriteBytes: f(n.SM.RFWriteBytes),
		FP32Ops: f(n.SM.FP32Ops)}
	return n
}
