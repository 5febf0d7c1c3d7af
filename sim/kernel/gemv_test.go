package kernel

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/tensorcore"
)

func gemvConfig(t *testing.T, sets ...string) *configs.Config {
	t.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	return ld.Config
}

// Each warp's instructions match cudaCoreGemm's structure, counted from
// the kernel's source, not from the generator: per k-step a thread
// loads one 16-B vector of each of the CTA's TILE_N = 2 rows of A and
// of each of the N tokens (2 + N LDG.128), converts every 16-bit element
// to FP32 (8 per vector; HADD2.F32 on the FP32 pipe for fp16; for bf16
// half IMAD.U32 shifts on the FP32 pipe and half LOP3 masks on the
// integer pipe; none for FP32) and does TILE_N x N x kStepK
// FFMAs, kStepK = 16 B / element; the epilogue reduces each of the
// TILE_N x N sums over 32 lanes (log2 32 = 5 SHFL and FADD each),
// stores each from lane 0 (an STS each), syncs once, and warp 0 adds the
// 4 warps' sums (4 LDS, 3 FADD), scales (1 FMUL) and stores D (1 STG).
// The k-steps are K over BLOCK_SIZE x kStepK, the CTAs M over 2 times
// the batch.
func TestGEMVInstructionCountsFollowTheKernel(t *testing.T) {
	cfg := gemvConfig(t)
	for _, c := range []struct {
		prec  tensorcore.Precision
		n     int
		bytes int
	}{{tensorcore.FP16, 1, 2}, {tensorcore.FP16, 3, 2}, {tensorcore.FP16, 8, 2},
		{tensorcore.BF16, 4, 2}, {tensorcore.TF32, 2, 4}} {
		g := Shape{M: 1000, N: c.n, K: 4096, Batch: 2, Precision: c.prec}
		p, err := NewGEMV(cfg, g)
		if err != nil {
			t.Fatal(err)
		}
		vec := 16 / c.bytes
		conv := 0
		if c.bytes == 2 {
			conv = (2 + c.n) * vec
		}
		fmaConv, aluConv := conv, 0
		if c.prec == tensorcore.BF16 { // IMAD.U32 shift (FP32 pipe) of the low half, LOP3 of the high
			fmaConv, aluConv = conv/2, conv/2
		}
		outs := 2 * c.n
		if p.Warps != 4 || p.CTAs != 500*2 || p.KSteps != (4096+128*vec-1)/(128*vec) {
			t.Errorf("%s N=%d: %d warps, %d CTAs, %d k-steps; want 4, 1000, %d",
				c.prec, c.n, p.Warps, p.CTAs, p.KSteps, (4096+128*vec-1)/(128*vec))
		}
		for w := 0; w < p.Warps; w++ {
			prog := p.Program(w)
			body := isa.Counts(prog.Body)
			if body[isa.OpLDG] != 2+c.n || body[isa.OpFMA] != 2*c.n*vec+fmaConv ||
				body[isa.OpALU] != 3+aluConv || body[isa.OpBRA] != 1 || body[isa.OpMMA] != 0 {
				t.Errorf("%s N=%d warp %d body: LDG %d FMA %d ALU %d BRA %d MMA %d; want %d %d %d 1 0",
					c.prec, c.n, w, body[isa.OpLDG], body[isa.OpFMA], body[isa.OpALU], body[isa.OpBRA],
					body[isa.OpMMA], 2+c.n, 2*c.n*vec+fmaConv, 3+aluConv)
			}
			epi := isa.Counts(prog.Epilogue)
			lds, fma, stg := 0, 5*outs, 0
			if w == 0 {
				lds, fma, stg = 4, 5*outs+3+1, 1
			}
			if epi[isa.OpSHFL] != 5*outs || epi[isa.OpSTS] != outs || epi[isa.OpBAR] != 1 ||
				epi[isa.OpLDS] != lds || epi[isa.OpFMA] != fma || epi[isa.OpSTG] != stg {
				t.Errorf("%s N=%d warp %d epilogue: SHFL %d STS %d BAR %d LDS %d FMA %d STG %d; want %d %d 1 %d %d %d",
					c.prec, c.n, w, epi[isa.OpSHFL], epi[isa.OpSTS], epi[isa.OpBAR], epi[isa.OpLDS],
					epi[isa.OpFMA], epi[isa.OpSTG], 5*outs, outs, lds, fma, stg)
			}
		}
	}
}

// The warps' LDG.128 chunks read A exactly once and each token's B once
// per CTA, predicated off past M and K: summed over every CTA, k-step
// and warp of a GEMM whose M and K are not multiples of the CTA's rows
// and k-step, the bytes are M x K and CTAs x N x K elements.
func TestGEMVLoadsCoverTheOperands(t *testing.T) {
	cfg := gemvConfig(t)
	g := Shape{M: 37, N: 3, K: 1000, Batch: 2, Precision: tensorcore.FP16}
	p, err := NewGEMV(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	var bytes [isa.NumOperands]uint64
	seen := map[memory.Region]bool{}
	for i := 0; i < p.CTAs; i++ {
		c := NewCTA(p, i)
		for k := 0; k < c.Steps; k++ {
			for w := 0; w < p.Warps; w++ {
				for _, in := range p.Program(w).Body {
					if in.Op != isa.OpLDG {
						continue
					}
					_, r := c.ChunkRegion(k, in.Operand, int(in.Chunk))
					bytes[in.Operand] += r.Bytes()
					if in.Operand == isa.OperandA && r.Rows > 0 {
						if seen[r] {
							t.Fatalf("CTA %d k-step %d warp %d reads %+v twice", i, k, w, r)
						}
						seen[r] = true
					}
				}
			}
		}
	}
	wantA := uint64(g.Batch * g.M * g.K * 2)
	wantB := uint64(p.CTAs * g.N * g.K * 2)
	if bytes[isa.OperandA] != wantA || bytes[isa.OperandB] != wantB {
		t.Errorf("LDG bytes A %d, B %d; want %d, %d", bytes[isa.OperandA], bytes[isa.OperandB], wantA, wantB)
	}
}

// The GEMV runs what the library's dispatcher takes and says why not
// for the rest: N above 8, a sparse GEMM, int8, K not in whole 16-B
// vectors, a C to read, a layout other than tn.
func TestGEMVRefusesWhatItCannotRun(t *testing.T) {
	cfg := gemvConfig(t)
	ok := Shape{M: 4096, N: 8, K: 4096, Batch: 1, Precision: tensorcore.FP16}
	if _, err := NewGEMV(cfg, ok); err != nil {
		t.Fatalf("N = 8: %v", err)
	}
	for want, g := range map[string]Shape{
		"N <= 8":       {M: 4096, N: 9, K: 4096, Batch: 1, Precision: tensorcore.FP16},
		"dense kernel": {M: 4096, N: 1, K: 4096, Batch: 1, Precision: tensorcore.FP16, Sparse: true},
		"not int8":     {M: 4096, N: 1, K: 4096, Batch: 1, Precision: tensorcore.INT8},
		"multiple of":  {M: 4096, N: 1, K: 4100, Batch: 1, Precision: tensorcore.FP16},
		"tn layout":    {M: 4096, N: 1, K: 4096, Batch: 1, Precision: tensorcore.FP16, Layout: Layout{ColumnA: true}},
	} {
		if _, err := NewGEMV(cfg, g); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one saying %q", g, err, want)
		}
	}
	if _, err := NewGEMV(gemvConfig(t, "kernel.beta=1"), ok); err == nil || !strings.Contains(err.Error(), "kernel.beta") {
		t.Errorf("beta 1: error %v, want one naming kernel.beta", err)
	}
}
