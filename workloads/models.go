package workloads

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/tensorcore"
)

// Default sizes of the built-in models (Model and Build use them for a
// zero batch, sequence length or resolution).
const (
	DefaultBatch      = 32  // images (ResNet) or sequences (BERT) per pass
	DefaultSeq        = 128 // BERT tokens per sequence
	DefaultResolution = 224 // ResNet input height = width
	DefaultPrecision  = tensorcore.FP16
	// MaxResolution bounds the ResNet input size (so batch x P x Q cannot
	// overflow before the row checks reject it).
	MaxResolution = 1 << 15
)

// Options size a built-in model; zero values take the defaults above.
type Options struct {
	Batch      int
	Seq        int // BERT only
	Resolution int // ResNet only: input height and width in pixels
	Precision  tensorcore.Precision
	// PerLayer keeps one row per layer instead of merging identical
	// GEMMs into one row with a Count.
	PerLayer bool
	// The decoder LLMs' options (llm.go): Phase (prefill, the default,
	// or decode), Context (decode: cached tokens per sequence),
	// SparseLMHead (prune the LM head too), and for the MoE models
	// MoESeparate (one kernel per expert instead of a grouped launch),
	// MoEImbalance (the router's Zipf exponent, 0: uniform) and Seed
	// (the routing's seed; 0 takes 1).
	Phase        string
	Context      int
	SparseLMHead bool
	MoESeparate  bool
	MoEImbalance float64
	Seed         uint64
}

type generator func(o Options) ([]layer, error)

var generators = map[string]generator{
	"resnet18":   resnetGen(resnetSpec{blocks: [4]int{2, 2, 2, 2}}),
	"resnet34":   resnetGen(resnetSpec{blocks: [4]int{3, 4, 6, 3}}),
	"resnet50":   resnetGen(resnetSpec{blocks: [4]int{3, 4, 6, 3}, bottleneck: true}),
	"resnet101":  resnetGen(resnetSpec{blocks: [4]int{3, 4, 23, 3}, bottleneck: true}),
	"bert-base":  bertGen(bertSpec{layers: 12, hidden: 768, heads: 12, ffn: 3072}),
	"bert-large": bertGen(bertSpec{layers: 24, hidden: 1024, heads: 16, ffn: 4096}),
}

// Models lists the built-in model names.
func Models() []string {
	return append([]string{"resnet50", "resnet18", "resnet34", "resnet101",
		"bert-base", "bert-large"}, LLMs()...)
}

// Model builds a built-in model's trace in fp16 at the given batch and
// sequence length (seq is ignored for ResNets); 0 takes the default.
func Model(name string, batch, seq int) (*Trace, error) {
	return Build(name, Options{Batch: batch, Seq: seq})
}

// Reads says whether the built-in model reads a workload option:
// "batch" (every model), "seq" (the BERT models and the LLMs' prefill),
// "context" (the LLMs' decode), "resolution" (the ResNets). A value given for an option the model does not read would
// change nothing, so the commands refuse it.
func Reads(model, option string) bool {
	switch option {
	case "batch":
		return generators[model] != nil
	case "seq":
		return strings.HasPrefix(model, "bert") || IsLLM(model)
	case "context":
		return IsLLM(model)
	case "resolution":
		return strings.HasPrefix(model, "resnet")
	}
	return false
}

// Build builds a built-in model's trace.
func Build(name string, o Options) (*Trace, error) {
	gen := generators[name]
	if gen == nil {
		return nil, fmt.Errorf("unknown model %q (built-in: %s)", name,
			strings.Join(Models(), ", "))
	}
	if o.Batch == 0 {
		o.Batch = DefaultBatch
	}
	if o.Seq == 0 {
		o.Seq = DefaultSeq
	}
	if o.Resolution == 0 {
		o.Resolution = DefaultResolution
	}
	if IsLLM(name) {
		o = llmDefaults(o)
	} else if o.Phase != "" || o.Context != 0 {
		return nil, fmt.Errorf("model %s: phase and context apply to the decoder LLMs "+
			"(%s), not to %s", name, strings.Join(LLMs(), ", "), name)
	}
	for _, v := range []struct {
		what string
		v    int
		max  int
	}{{"batch", o.Batch, MaxDim}, {"sequence length", o.Seq, MaxDim},
		{"resolution", o.Resolution, MaxResolution}} {
		if v.v < 1 || v.v > v.max {
			return nil, fmt.Errorf("model %s: %s must be in 1..%d, got %d",
				name, v.what, v.max, v.v)
		}
	}
	if !o.Precision.Valid() {
		return nil, fmt.Errorf("model %s: unknown precision %v", name, o.Precision)
	}
	layers, err := gen(o)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	rows := make([]GEMM, len(layers))
	for i, l := range layers {
		rows[i] = l.gemm(o.Precision)
	}
	if !o.PerLayer {
		rows = Merge(rows)
	}
	t := &Trace{Name: name, GEMMs: rows}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("model %s at batch %d: %w", name, o.Batch, err)
	}
	return t, nil
}

// layer is one weight layer (or attention product) of a model, before it
// becomes a GEMM row.
type layer struct {
	name    string
	m, n, k int
	batch   int
	// out and in are the counts the ASP rule looks at (output and input
	// channels or features); prunable is false for activation x
	// activation products, which have no weights.
	out, in  int
	prunable bool
	note     string
	// layout is the operands' layout (empty: LayoutDefault, what
	// weights x channels-last or row-major activations give).
	layout string
}

// gemm turns the layer into a row: the ASP rule decides the sparsity,
// and a pruned layer's M and K are padded to the sparse kernel's needs.
func (l layer) gemm(precision tensorcore.Precision) GEMM {
	g := GEMM{Name: l.name, M: l.m, N: l.n, K: l.k, Precision: precision,
		Sparsity: Dense, Count: 1, Batch: max(l.batch, 1), Note: l.note,
		Layout: l.layout}
	if g.Layout == "" || precision == tensorcore.INT8 {
		// CUTLASS's sm80 int8 kernels are tn only: an int8 model lays its
		// operands out for them (a validation row's layout is its own).
		g.Layout = LayoutDefault
	}
	if l.prunable && ASPEligible(l.out, l.in) {
		g.Sparsity = SparsityFor(precision)
		g = Pad(g)
	}
	return g
}

// SparsityFor is the hardware's structured-sparsity pattern for a
// precision: 1:2 for tf32, 2:4 for the others (PTX ISA mma.sp).
func SparsityFor(precision tensorcore.Precision) string {
	if precision == tensorcore.TF32 {
		return Sparse12
	}
	return Sparse24
}

// SparseAlign is the multiple that the sparse operand's rows (M) and
// columns (K) must have for the library's sparse GEMM: the CUTLASS
// backend's constraints in PyTorch's semi-structured sparsity
// (torch/sparse/semi_structured.py, _DTYPE_SHAPE_CONSTRAINTS:
// sparse_min_rows, sparse_min_cols).
func SparseAlign(precision tensorcore.Precision) (mMul, kMul int) {
	switch precision {
	case tensorcore.INT8:
		return 16, 128
	case tensorcore.TF32:
		return 32, 32
	}
	return 32, 64
}

// Pad pads a sparse row's M and K up to SparseAlign's multiples, the way a
// user of the library pads the weight with zero rows and columns, records
// the layer's own shape in UnpaddedM/UnpaddedK and says so in Note. Dense
// rows and rows already aligned are returned unchanged.
func Pad(g GEMM) GEMM {
	if g.Sparsity == Dense {
		return g
	}
	mMul, kMul := SparseAlign(g.Precision)
	m, k := roundUp(g.M, mMul), roundUp(g.K, kMul)
	if m == g.M && k == g.K {
		return g
	}
	var what []string
	if m != g.M {
		what = append(what, fmt.Sprintf("M %d->%d", g.M, m))
		g.UnpaddedM, g.M = g.M, m
	}
	if k != g.K {
		what = append(what, fmt.Sprintf("K %d->%d", g.K, k))
		g.UnpaddedK, g.K = g.K, k
	}
	note := fmt.Sprintf(padNotePrefix+"%s for the sparse kernel (%s wants M%%%d, K%%%d)",
		strings.Join(what, ", "), g.Precision, mMul, kMul)
	if g.Note != "" {
		note = g.Note + "; " + note
	}
	g.Note = note
	return g
}

func roundUp(v, mul int) int { return (v + mul - 1) / mul * mul }

// Merge folds rows of identical shape (all fields but Name and Count equal)
// into the first of them, summing Count, keeping first-appearance order.
// The merged row's name lists the layers it stands for, compactly
// ("layer1.{0-2}.conv2", "encoder.{0-23}.ffn1").
func Merge(rows []GEMM) []GEMM {
	idx := map[GEMM]int{}
	var out []GEMM
	var names [][]string
	for _, g := range rows {
		k := g
		k.Name, k.Count = "", 0
		if i, ok := idx[k]; ok {
			out[i].Count += g.Count
			names[i] = append(names[i], g.Name)
			continue
		}
		idx[k] = len(out)
		out = append(out, g)
		names = append(names, []string{g.Name})
	}
	for i := range out {
		out[i].Name = compactNames(names[i])
	}
	return out
}

// compactNames joins layer names, folding names that differ only in one
// numeric dot-separated part into "prefix.{0-3}.suffix".
func compactNames(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	type group struct {
		parts []string
		at    int // index of the varying numeric part, -1 for none
		nums  []int
	}
	var groups []*group
	for _, n := range names {
		parts := strings.Split(n, ".")
		placed := false
		for _, gr := range groups {
			if at, v, ok := joinable(gr.parts, gr.at, parts); ok {
				if gr.at < 0 {
					first, _ := strconv.Atoi(gr.parts[at])
					gr.nums = []int{first}
				}
				gr.at = at
				gr.nums = append(gr.nums, v)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, &group{parts: parts, at: -1})
		}
	}
	var out []string
	for _, gr := range groups {
		parts := slices.Clone(gr.parts)
		if gr.at >= 0 {
			parts[gr.at] = "{" + ranges(gr.nums) + "}"
		}
		out = append(out, strings.Join(parts, "."))
	}
	return strings.Join(out, "+")
}

// joinable reports whether name parts p fit the group's parts g, differing
// in exactly the numeric part at (or, when at < 0, in one numeric part).
func joinable(g []string, at int, p []string) (int, int, bool) {
	if len(g) != len(p) {
		return 0, 0, false
	}
	diff := -1
	for i := range g {
		if g[i] == p[i] && i != at {
			continue
		}
		if diff >= 0 || (at >= 0 && i != at) {
			return 0, 0, false
		}
		diff = i
	}
	if diff < 0 {
		return 0, 0, false
	}
	v, err := strconv.Atoi(p[diff])
	if err != nil {
		return 0, 0, false
	}
	if at < 0 {
		if _, err := strconv.Atoi(g[diff]); err != nil {
			return 0, 0, false
		}
	}
	return diff, v, true
}

// ranges writes sorted distinct numbers as "0-3,5".
func ranges(nums []int) string {
	var b strings.Builder
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", nums[i], nums[j])
		} else {
			fmt.Fprintf(&b, "%d", nums[i])
		}
		i = j + 1
	}
	return b.String()
}

// WithPrecision returns a copy of the trace in precision p: every row
// takes p, sparse rows take p's pattern (SparsityFor) and are re-padded
// from their own (unpadded) shape to p's alignment (SparseAlign).
func (t *Trace) WithPrecision(p tensorcore.Precision) (*Trace, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("unknown precision %v", p)
	}
	out := t.WithGEMMs(slices.Clone(t.GEMMs))
	for i, g := range out.GEMMs {
		g.Precision = p
		if g.Sparsity != Dense {
			g.Sparsity = SparsityFor(p)
			g = Pad(unpad(g))
		}
		out.GEMMs[i] = g
	}
	return out, nil
}

// unpad undoes Pad: the layer's own M and K, without Pad's note.
func unpad(g GEMM) GEMM {
	if g.UnpaddedM == 0 && g.UnpaddedK == 0 {
		return g
	}
	if g.UnpaddedM > 0 {
		g.M, g.UnpaddedM = g.UnpaddedM, 0
	}
	if g.UnpaddedK > 0 {
		g.K, g.UnpaddedK = g.UnpaddedK, 0
	}
	if i := strings.Index(g.Note, padNotePrefix); i == 0 {
		g.Note = ""
	} else if i := strings.Index(g.Note, "; "+padNotePrefix); i >= 0 {
		g.Note = g.Note[:i]
	}
	return g
}

const padNotePrefix = "padded "
