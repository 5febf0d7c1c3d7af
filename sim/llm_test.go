package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// decodeRows are Llama-2-7B's batch-1 decode weight GEMMs of M 4096:
// the attention projections (4096 x 1 x 4096) and the FFN's down
// projection (4096 x 1 x 11008), whose time is the weights' bytes.
func decodeRows(t *testing.T) (attention, down *workloads.Trace) {
	t.Helper()
	tr, err := workloads.Build("llama-2-7b", workloads.Options{Batch: 1,
		Phase: workloads.PhaseDecode, Context: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var kept []workloads.GEMM
	for _, g := range tr.GEMMs {
		if g.N == 1 && g.Sparsity != workloads.Dense && g.M == 4096 {
			kept = append(kept, g)
		}
	}
	if len(kept) != 2 || kept[0].K != 4096 || kept[1].K != 11008 {
		t.Fatalf("decode weight rows of M 4096: %+v, want K 4096 and 11008", kept)
	}
	return &workloads.Trace{Name: tr.Name, GEMMs: kept[:1]},
		&workloads.Trace{Name: tr.Name, GEMMs: kept[1:]}
}

// A memory-bound decode GEMM is a stream of its weights: the dense
// kernel's time is within 15 % of the bytes it must move (weights,
// activations, output) over the sustained DRAM bandwidth, and no 2:4
// kernel beats the compressed-bytes ceiling, where fp16 2:4 moves the
// kept half of the values plus 2 bits of metadata per kept value
// (56.25 % of the dense weight bytes; PTX ISA, mma.sp metadata). Here on
// the attention projections; the FFN's down projection, three times
// deeper, is held to the same in the long tier
// (TestDecodeDownProjectionAtTheDRAMBound).
func TestDecodeAtTheDRAMBound(t *testing.T) {
	t.Parallel()
	attention, _ := decodeRows(t)
	checkDecodeAtTheDRAMBound(t, attention)
}

// checkDecodeAtTheDRAMBound runs tr's decode GEMMs dense and sparse on
// the default config and holds them to TestDecodeAtTheDRAMBound's bounds.
func checkDecodeAtTheDRAMBound(t *testing.T, tr *workloads.Trace) {
	t.Helper()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := ld.Config.Memory.DRAM
	bytesPerUS := d.BandwidthGBps * d.Efficiency * 1e3
	rep, err := Run(ld, Job{Workloads: []*workloads.Trace{tr}, Modes: tensorcore.Modes})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(tensorcore.Modes)*len(tr.GEMMs) {
		t.Fatalf("%d records, want %d", len(rep.Results), len(tensorcore.Modes)*len(tr.GEMMs))
	}
	for _, r := range rep.Results {
		weights := float64(2 * r.M * r.K)
		io := float64(2 * (r.N*r.K + r.M*r.N))
		if r.Mode == tensorcore.Dense {
			bound := (weights + io) / bytesPerUS
			t.Logf("%s dense: %.2f µs, bytes over bandwidth %.2f µs (%+.1f %%)", r.Layer,
				r.TimeUS, bound, 100*(r.TimeUS/bound-1))
			if r.TimeUS < 0.85*bound || r.TimeUS > 1.15*bound {
				t.Errorf("%s dense: %.2f µs, not within 15 %% of %.2f µs", r.Layer, r.TimeUS, bound)
			}
			continue
		}
		ceiling := (weights*(0.5+0.0625) + io) / bytesPerUS
		t.Logf("%s sparse: %.2f µs, compressed-bytes ceiling %.2f µs", r.Layer, r.TimeUS, ceiling)
		if r.TimeUS < ceiling {
			t.Errorf("%s sparse: %.2f µs beats the compressed-bytes ceiling %.2f µs",
				r.Layer, r.TimeUS, ceiling)
		}
	}
}

// fp16 2:4 moves the kept half of the weights and 2 bits of metadata per
// kept value: 56.25 % of the dense weight bytes (issue 52).
func TestCompulsoryTrafficOfTwoFour(t *testing.T) {
	r := LayerResult{M: 4096, N: 1, K: 4096, Batch: 1, Precision: tensorcore.FP16}
	tr := compulsoryTraffic(r, tensorcore.Pattern{N: 2, M: 4})
	dense := int64(4096 * 4096 * 2)
	if got := float64(tr.WeightBytes+tr.MetadataBytes) / float64(dense); got != 0.5625 {
		t.Errorf("2:4 weights and metadata are %.4f of the dense weight bytes, want 0.5625", got)
	}
	if tr.ActivationBytes != 4096*2 || tr.OutputBytes != 4096*2 || tr.DenseBytes != dense+2*4096*2 {
		t.Errorf("traffic %+v", tr)
	}
	if tr.Ceiling >= 1/0.5625 || tr.Ceiling < 1.77 {
		t.Errorf("ceiling %.4f, want just under 1.78", tr.Ceiling)
	}
}

// A decode pass of batch B makes B tokens: tokens/s is B over the pass
// time, the time per output token is the pass, and the energy per token
// is the pass's over B. A --layer cut gets no rate.
func TestTokenRates(t *testing.T) {
	rep := &Report{Provenance: &Provenance{Workloads: []WorkloadSource{
		{Name: "d", Phase: workloads.PhaseDecode, Batch: 4, Context: 100},
		{Name: "p", Phase: workloads.PhasePrefill, Batch: 2, Seq: 512},
		{Name: "cut", Phase: workloads.PhaseDecode, Batch: 4, Layers: "q_proj"}}},
		Totals: []Total{{Workload: "d", TimeUS: 10000, TotalPower: TotalPower{EnergyUJ: 5e6}},
			{Workload: "p", TimeUS: 2e5, TotalPower: TotalPower{EnergyUJ: 1.024e7}},
			{Workload: "cut", TimeUS: 10}}}
	addTokenRates(rep)
	d, p, cut := rep.Totals[0].TokenRate, rep.Totals[1].TokenRate, rep.Totals[2].TokenRate
	if d.Tokens != 4 || d.TokensPerS != 400 || d.MSPerOutputToken != 10 || d.EnergyPerTokenMJ != 1250 {
		t.Errorf("decode: %+v", d)
	}
	if p.Tokens != 1024 || p.TokensPerS != 5120 || p.MSPerOutputToken != 200 || p.EnergyPerTokenMJ != 10 {
		t.Errorf("prefill: %+v", p)
	}
	if cut != (results.TokenRate{}) {
		t.Errorf("a --layer cut got a token rate: %+v", cut)
	}
}
