package workloads

import (
	"slices"
	"strings"
	"testing"
)

// publishedParams are the parameter counts of the checkpoints on the
// Hugging Face Hub (the safetensors index's total_size / 2 bytes of the
// bf16/fp16 weights; the model cards' 7B, 13B, 70B, 8B, 70B, 7.3B and
// 46.7B): an independent figure the dimensions must reproduce.
var publishedParams = map[string]int64{
	"llama-2-7b":   6738415616,
	"llama-2-13b":  13015864320,
	"llama-2-70b":  68976648192,
	"llama-3-8b":   8030261248,
	"llama-3-70b":  70553706496,
	"mistral-7b":   7241732096,
	"mixtral-8x7b": 46702792704,
}

func TestLLMParamsMatchPublished(t *testing.T) {
	if got, want := len(LLMs()), len(publishedParams); got != want {
		t.Fatalf("%d built-in LLMs, %d published counts", got, want)
	}
	for _, name := range LLMs() {
		if got, want := llms[name].Params(), publishedParams[name]; got != want {
			t.Errorf("%s: %d parameters from the dimensions, published %d", name, got, want)
		}
	}
}

// weightsInTrace sums M x K over the weight GEMMs (the rows with a
// weight: linear layers, not the attention products), each expert
// counted once per problem of a grouped launch.
func weightsInTrace(tr *Trace) int64 {
	var s int64
	for _, g := range tr.GEMMs {
		if strings.Contains(g.Name, "self_attn.scores") || strings.Contains(g.Name, "self_attn.context") {
			continue
		}
		batch := int64(1)
		if strings.Contains(g.Name, "experts") {
			batch = int64(g.Batch)
		}
		s += g.UsefulMACs() / int64(g.N) / int64(g.Batch) * batch * int64(g.Count)
	}
	return s
}

// The generated trace's weight GEMMs hold every parameter but the
// embedding table and the RMSNorm weights: a check of the generator
// against the published count, not against Params.
func TestLLMTraceHoldsThePublishedWeights(t *testing.T) {
	for _, name := range LLMs() {
		s := llms[name]
		// Enough tokens that every expert gets some.
		tr, err := Build(name, Options{Batch: 64, Phase: PhaseDecode, Context: 16, MoESeparate: true})
		if err != nil {
			t.Fatal(err)
		}
		norms := int64(2*s.layers+1) * int64(s.hidden)
		emb := int64(s.vocab) * int64(s.hidden)
		if got, want := weightsInTrace(tr), publishedParams[name]-emb-norms; got != want {
			t.Errorf("%s: the trace's weight GEMMs hold %d parameters, want %d", name, got, want)
		}
	}
}

// flopsPerToken is the closed form of a decoder's forward FLOPs per new
// token (Kaplan et al. 2020, table 1, with grouped-query attention and a
// gated FFN): 2 x the active weights of the blocks (attention
// projections, top-k experts' FFNs, router) + the LM head, + 2 x 2 x
// layers x keys x heads x head dim for the scores and context.
func flopsPerToken(s llmSpec, keys int) int64 {
	h, d := int64(s.hidden), int64(s.hidden/s.heads)
	attn := 2*h*h + 2*h*int64(s.kvHeads)*d
	ffn := 3 * h * int64(s.ffn)
	if s.experts > 0 {
		ffn = int64(s.topK)*ffn + h*int64(s.experts)
	}
	return 2*int64(s.layers)*(attn+ffn) + 2*int64(s.vocab)*h +
		4*int64(s.layers)*int64(keys)*h
}

func TestLLMDecodeFLOPsPerToken(t *testing.T) {
	for _, name := range LLMs() {
		for _, c := range []struct{ batch, context int }{{1, 1024}, {8, 100}, {3, 4000}, {2, 8000}} {
			if c.context >= MaxPosition(name) {
				continue
			}
			tr, err := Build(name, Options{Batch: c.batch, Phase: PhaseDecode,
				Context: c.context, MoESeparate: true})
			if err != nil {
				t.Fatal(err)
			}
			got := 2 * tr.UsefulMACs()
			keys := c.context + 1
			if w := llms[name].window; w > 0 {
				keys = min(keys, w) // Mistral-7B's sliding window
			}
			want := int64(c.batch) * flopsPerToken(llms[name], keys)
			if got != want {
				t.Errorf("%s batch %d context %d: %d FLOPs, closed form %d", name,
					c.batch, c.context, got, want)
			}
		}
	}
}

func TestLLMPrefillFLOPs(t *testing.T) {
	for _, name := range []string{"llama-2-7b", "llama-2-70b", "llama-3-8b"} {
		s := llms[name]
		const batch, seq = 2, 512
		tr, err := Build(name, Options{Batch: batch, Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		h := int64(s.hidden)
		// Every token through the blocks, the LM head on the last token
		// of each sequence, attention over the full seq x seq square.
		perToken := flopsPerToken(s, 0) - 2*int64(s.vocab)*h
		want := batch*seq*perToken + batch*2*int64(s.vocab)*h +
			4*int64(s.layers)*batch*seq*seq*h
		if got := 2 * tr.UsefulMACs(); got != want {
			t.Errorf("%s prefill %dx%d: %d FLOPs, closed form %d", name, batch, seq, got, want)
		}
	}
}

func TestLLMPruningRule(t *testing.T) {
	tr, err := Build("llama-2-70b", Options{Batch: 1, Phase: PhaseDecode})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range tr.GEMMs {
		dense := strings.Contains(g.Name, "scores") || strings.Contains(g.Name, "context") ||
			g.Name == "lm_head"
		if got := g.Sparsity == Dense; got != dense {
			t.Errorf("%s: sparsity %s, want dense=%v", g.Name, g.Sparsity, dense)
		}
	}
	tr, err = Build("llama-2-70b", Options{Batch: 1, Phase: PhaseDecode, SparseLMHead: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := tr.GEMMs[len(tr.GEMMs)-1]; g.Name != "lm_head" || g.Sparsity != Sparse24 {
		t.Errorf("SparseLMHead: last row %s %s, want lm_head 2:4", g.Name, g.Sparsity)
	}
}

// Layers repeat: each distinct GEMM is one row with its count.
func TestLLMRowsMerge(t *testing.T) {
	tr, err := Build("llama-2-7b", Options{Batch: 1, Phase: PhaseDecode, Context: 1024})
	if err != nil {
		t.Fatal(err)
	}
	// q,k,v,o (one shape), scores, context, gate+up, down, lm_head.
	if len(tr.GEMMs) != 6 {
		for _, g := range tr.GEMMs {
			t.Logf("%s %dx%dx%d b%d x%d", g.Name, g.M, g.N, g.K, g.Batch, g.Count)
		}
		t.Fatalf("%d rows, want 6", len(tr.GEMMs))
	}
	if g := tr.GEMMs[0]; g.Count != 4*32 || g.M != 4096 || g.N != 1 || g.K != 4096 {
		t.Errorf("first row %s %dx%dx%d x%d, want 4096x1x4096 x128", g.Name, g.M, g.N, g.K, g.Count)
	}
}

func TestLLMLimits(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Batch: 1, Phase: "train"}, "phase"},
		{Options{Batch: 1 << 20}, "batch 1048576: must be in 1..65536"},
		{Options{Batch: 1, Seq: 4097}, "seq 4097: must be in 1..4096"},
		{Options{Batch: 1, Phase: PhaseDecode, Context: 4096}, "context 4096: must be in 1..4095"},
	} {
		_, err := Build("llama-2-7b", c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.o, err, c.want)
		}
	}
	if _, err := Build("bert-base", Options{Phase: PhaseDecode}); err == nil {
		t.Error("bert-base --phase decode: no error")
	}
}

// Mixtral's experts run as one grouped launch per stage per layer (w13
// and w2); the naive schedule launches each expert's w1, w3, w2.
func TestMixtralGroupedLaunches(t *testing.T) {
	launches := func(o Options) int {
		o.PerLayer = true
		tr, err := Build("mixtral-8x7b", o)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range tr.GEMMs {
			if strings.HasPrefix(g.Name, "model.layers.0.") && strings.Contains(g.Name, "experts") {
				n += g.Count
			}
		}
		return n
	}
	if got := launches(Options{Batch: 64, Phase: PhaseDecode}); got != 2 {
		t.Errorf("grouped: %d expert launches in layer 0, want 2", got)
	}
	if got := launches(Options{Batch: 64, Phase: PhaseDecode, MoESeparate: true}); got != 3*8 {
		t.Errorf("separate: %d expert launches in layer 0, want 24", got)
	}
	if got := launches(Options{Batch: 1, Phase: PhaseDecode, MoESeparate: true}); got != 3*2 {
		t.Errorf("separate at batch 1: %d expert launches in layer 0, want 6 (top-2)", got)
	}
}

func TestRoute(t *testing.T) {
	c := Route(1000, 8, 2, 0, 7)
	if !slices.Equal(c, Route(1000, 8, 2, 0, 7)) {
		t.Fatal("same seed, different routing")
	}
	sum, most := 0, 0
	for _, n := range c {
		sum += n
		most = max(most, n)
	}
	if sum != 2000 {
		t.Fatalf("%d assignments of 1000 tokens top-2, want 2000", sum)
	}
	// Uniform: 250 per expert expected; skewed: the first expert hottest.
	if most > 320 {
		t.Errorf("uniform routing %v: an expert got %d", c, most)
	}
	skew := Route(1000, 8, 2, 1.5, 7)
	if skew[0] <= most || skew[0] > 1000 {
		t.Errorf("imbalance 1.5: %v, want expert 0 above the uniform maximum %d (and at most one per token)", skew, most)
	}
}
