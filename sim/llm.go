package sim

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// addTokenRates reads each decoder LLM workload's totals as tokens: the
// tokens one pass handles (prefill: batch x seq; decode: batch, one new
// token per sequence), tokens per second, the time per output token and
// the energy per token. Workloads cut by --layer get none: their totals
// are not a pass.
func addTokenRates(rep *Report) {
	for i, t := range rep.Totals {
		src, ok := sourceOf(rep, t.Workload)
		if !ok || src.Phase == "" || src.Layers != "" || t.TimeUS <= 0 {
			continue
		}
		tokens := src.Batch
		if src.Phase == workloads.PhasePrefill {
			tokens *= src.Seq
		}
		r := &rep.Totals[i].TokenRate
		r.Phase, r.Tokens = src.Phase, tokens
		r.TokensPerS = float64(tokens) / (t.TimeUS * 1e-6)
		r.MSPerOutputToken = t.TimeUS / 1e3
		r.EnergyPerTokenMJ = t.EnergyUJ / 1e3 / float64(tokens)
	}
}

// sourceOf is the provenance of the workload named name.
func sourceOf(rep *Report, name string) (WorkloadSource, bool) {
	if rep.Provenance == nil {
		return WorkloadSource{}, false
	}
	for _, s := range rep.Provenance.Workloads {
		if s.Name == name {
			return s, true
		}
	}
	return WorkloadSource{}, false
}

// memoryBound is how close to its compulsory bytes over the sustained
// DRAM bandwidth a dense kernel's time must be for its sparse twin's
// "why not 2x" to be the traffic: within 1.5x.
const memoryBound = 1.5

// addTraffic gives each sparse record whose dense twin is memory-bound
// (its time within memoryBound of its compulsory bytes over the
// sustained DRAM bandwidth) its compulsory traffic by operand and the
// ceiling the compressed weights allow.
func addTraffic(rep *Report, cfg *configs.Config) {
	d := cfg.Memory.DRAM
	bytesPerUS := d.BandwidthGBps * d.Efficiency * 1e3
	type key struct{ w, l string }
	dense := map[key]LayerResult{}
	for _, r := range rep.Results {
		if r.Mode == tensorcore.Dense {
			dense[key{r.Workload, r.Layer}] = r
		}
	}
	for i, r := range rep.Results {
		dr, ok := dense[key{r.Workload, r.Layer}]
		if !ok || r.Mode != tensorcore.Sparse || !r.SparseApplied {
			continue
		}
		p, err := tensorcore.ParsePattern(r.Pattern)
		if err != nil {
			continue
		}
		tr := compulsoryTraffic(r, p)
		if dr.TimeUS > memoryBound*float64(tr.DenseBytes)/bytesPerUS {
			continue
		}
		rep.Results[i].Traffic = &tr
	}
}

// compulsoryTraffic is a sparse GEMM's bytes read or written once: A's
// kept values (N of every M along K) and their metadata
// (Pattern.MetadataBits per kept value), B and D; and the dense
// GEMM's (all of A).
func compulsoryTraffic(r LayerResult, p tensorcore.Pattern) Traffic {
	e := int64(r.Precision.ElementBytes())
	m, n, k, b := int64(r.M), int64(r.N), int64(r.K), int64(max(r.Batch, 1))
	if r.SparseOperand == workloads.OperandActivations { // run transposed: A is the activations
		m, n = n, m
	}
	kept := int64(p.Kept(int(m*k))) * b
	t := Traffic{WeightBytes: kept * e,
		MetadataBytes:   kept * int64(p.MetadataBits()) / 8,
		ActivationBytes: k * n * b * e, OutputBytes: m * n * b * e}
	t.DenseBytes = m*k*b*e + t.ActivationBytes + t.OutputBytes
	t.Ceiling = float64(t.DenseBytes) / float64(t.WeightBytes+t.MetadataBytes+t.ActivationBytes+t.OutputBytes)
	return t
}
