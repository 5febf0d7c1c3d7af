package workloads

import "fmt"

// Phases of a decoder LLM's inference: prefill runs a whole prompt of
// --seq tokens per sequence; decode runs one new token per sequence
// against --context cached tokens.
const (
	PhasePrefill = "prefill"
	PhaseDecode  = "decode"
)

// Defaults and bounds of the LLM options.
const (
	DefaultContext = 1024 // decode: cached tokens per sequence
	// MaxLLMBatch bounds the sequences of one LLM pass: 65536 sequences
	// already hold more KV cache than any GPU (Llama-2-7B: 0.5 MB per
	// token).
	MaxLLMBatch = 1 << 16
)

// llmSpec is a decoder-only transformer from its published dimensions
// (the model's config.json): pre-norm blocks of grouped-query attention
// and a gated (SwiGLU) FFN, or Experts gated FFNs of which a router
// picks TopK per token (mixture of experts).
type llmSpec struct {
	layers, hidden, heads, kvHeads int
	ffn                            int // intermediate size (of one expert)
	vocab, maxPos                  int
	tied                           bool // LM head shares the embedding
	experts, topK                  int  // 0: dense FFN
	// window is the sliding attention window (Mistral-7B-v0.1's
	// sliding_window): a decode step attends to at most this many keys;
	// 0: none.
	window int
	// params is the published parameter count (the checkpoint's tensors,
	// the model card's figure); the test checks the generator against it.
	params int64
}

// llms are the built-in decoder models; dimensions from each model's
// config.json on the Hugging Face Hub (sources in docs/workloads.md).
var llms = map[string]llmSpec{
	"llama-2-7b": {layers: 32, hidden: 4096, heads: 32, kvHeads: 32, ffn: 11008,
		vocab: 32000, maxPos: 4096, params: 6738415616},
	"llama-2-13b": {layers: 40, hidden: 5120, heads: 40, kvHeads: 40, ffn: 13824,
		vocab: 32000, maxPos: 4096, params: 13015864320},
	"llama-2-70b": {layers: 80, hidden: 8192, heads: 64, kvHeads: 8, ffn: 28672,
		vocab: 32000, maxPos: 4096, params: 68976648192},
	"llama-3-8b": {layers: 32, hidden: 4096, heads: 32, kvHeads: 8, ffn: 14336,
		vocab: 128256, maxPos: 8192, params: 8030261248},
	"llama-3-70b": {layers: 80, hidden: 8192, heads: 64, kvHeads: 8, ffn: 28672,
		vocab: 128256, maxPos: 8192, params: 70553706496},
	"mistral-7b": {layers: 32, hidden: 4096, heads: 32, kvHeads: 8, ffn: 14336,
		vocab: 32000, maxPos: 32768, window: 4096, params: 7241732096},
	"mixtral-8x7b": {layers: 32, hidden: 4096, heads: 32, kvHeads: 8, ffn: 14336,
		vocab: 32000, maxPos: 32768, experts: 8, topK: 2, params: 46702792704},
}

// LLMs lists the built-in decoder LLM names.
func LLMs() []string {
	return []string{"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b",
		"llama-3-70b", "mistral-7b", "mixtral-8x7b"}
}

func init() {
	for name, s := range llms {
		generators[name] = llmGen(s)
	}
}

// IsLLM says whether name is a built-in decoder LLM.
func IsLLM(name string) bool { _, ok := llms[name]; return ok }

// MaxPosition is an LLM's longest sequence (max_position_embeddings);
// 0 for other names.
func MaxPosition(name string) int { return llms[name].maxPos }

// IsMoE says whether name is a built-in mixture-of-experts LLM.
func IsMoE(name string) bool { return llms[name].experts > 0 }

// headDim is the size of one attention head.
func (s llmSpec) headDim() int { return s.hidden / s.heads }

// Params counts the model's parameters from its dimensions: embedding,
// per block the attention projections, the FFN (every expert) and the
// router, two RMSNorm weights, then the final norm and the LM head
// (none when tied to the embedding).
func (s llmSpec) Params() int64 {
	h, d := int64(s.hidden), int64(s.headDim())
	attn := h*int64(s.heads)*d*2 + h*int64(s.kvHeads)*d*2 // q, o; k, v
	ffn := 3 * h * int64(s.ffn)
	if s.experts > 0 {
		ffn = int64(s.experts)*ffn + h*int64(s.experts) // experts, router
	}
	block := attn + ffn + 2*h
	emb := int64(s.vocab) * h
	head := emb
	if s.tied {
		head = 0
	}
	return emb + int64(s.layers)*block + h + head
}

// check says whether the options fit the model's limits; every error
// names the option and its limit (the commands name their flags).
func (s llmSpec) check(o Options) error {
	switch o.Phase {
	case PhasePrefill, PhaseDecode:
	default:
		return fmt.Errorf("phase %q: want %s or %s", o.Phase, PhasePrefill, PhaseDecode)
	}
	if o.Batch < 1 || o.Batch > MaxLLMBatch {
		return fmt.Errorf("batch %d: must be in 1..%d sequences", o.Batch, MaxLLMBatch)
	}
	if o.Phase == PhasePrefill && (o.Seq < 1 || o.Seq > s.maxPos) {
		return fmt.Errorf("seq %d: must be in 1..%d (the model's max_position_embeddings)",
			o.Seq, s.maxPos)
	}
	if o.Phase == PhaseDecode && (o.Context < 1 || o.Context >= s.maxPos) {
		return fmt.Errorf("context %d: must be in 1..%d (the new token is position "+
			"context+1 of the model's max_position_embeddings %d)", o.Context, s.maxPos-1, s.maxPos)
	}
	if s.hidden%s.heads != 0 || s.heads%s.kvHeads != 0 {
		return fmt.Errorf("hidden %d, heads %d, kv heads %d: not a grouped-query shape",
			s.hidden, s.heads, s.kvHeads)
	}
	return nil
}

// llmGen builds one forward pass of a decoder LLM at a phase. Linear
// layers put tokens on N (prefill: batch x seq; decode: batch). The
// attention products run per KV head with its query group on N (the
// grouped-query layout of FlashAttention-2 and vLLM's paged attention):
// scores K x Q^T (M = keys, N = group x queries, K = head dim) and
// context V^T x P^T (M = head dim, N = group x queries, K = keys; nn).
// Prefill computes the full (non-causal-skipping) square of keys x
// queries; decode attends to context+1 keys (the cache and its own; at
// most the sliding window of a model that has one). The
// LM head runs on the last token of each sequence (the logits that pick
// the next token). Every linear layer of the blocks is prunable (the
// ASP rule then decides); the LM head is dense unless o.SparseLMHead.
func llmGen(s llmSpec) generator {
	return func(o Options) ([]layer, error) {
		if err := s.check(o); err != nil {
			return nil, err
		}
		queries, keys := o.Seq, o.Seq
		if o.Phase == PhaseDecode {
			queries, keys = 1, o.Context+1
			if s.window > 0 {
				keys = min(keys, s.window)
			}
		}
		tokens := o.Batch * queries
		d, group := s.headDim(), s.heads/s.kvHeads
		linear := func(name string, out, in, n int) layer {
			return layer{name: name, m: out, n: n, k: in, out: out, in: in,
				prunable: true}
		}
		var ls []layer
		for i := range s.layers {
			p := fmt.Sprintf("model.layers.%d.", i)
			ls = append(ls,
				linear(p+"self_attn.q_proj", s.heads*d, s.hidden, tokens),
				linear(p+"self_attn.k_proj", s.kvHeads*d, s.hidden, tokens),
				linear(p+"self_attn.v_proj", s.kvHeads*d, s.hidden, tokens),
				layer{name: p + "self_attn.scores", m: keys, n: group * queries, k: d,
					batch: o.Batch * s.kvHeads,
					note: fmt.Sprintf("K x Q^T per KV head: M = %d keys, N = %d query heads x %d queries, "+
						"K = head dim; activations, dense", keys, group, queries)},
				layer{name: p + "self_attn.context", m: d, n: group * queries, k: keys,
					batch: o.Batch * s.kvHeads, layout: LayoutNN,
					note: "V^T x P^T per KV head: M = head dim, N = query heads x queries, " +
						"K = keys; activations, dense"},
				linear(p+"self_attn.o_proj", s.hidden, s.heads*d, tokens))
			if s.experts > 0 {
				moe, err := s.moeLayers(p, tokens, i, o)
				if err != nil {
					return nil, err
				}
				ls = append(ls, moe...)
				continue
			}
			ls = append(ls,
				linear(p+"mlp.gate_proj", s.ffn, s.hidden, tokens),
				linear(p+"mlp.up_proj", s.ffn, s.hidden, tokens),
				linear(p+"mlp.down_proj", s.hidden, s.ffn, tokens))
		}
		head := linear("lm_head", s.vocab, s.hidden, o.Batch)
		head.prunable = o.SparseLMHead
		head.note = "logits of the last token of each sequence"
		return append(ls, head), nil
	}
}

// LLMOptionsRead are the options an LLM reads at a phase (batch always;
// seq at prefill; context at decode).
func LLMOptionsRead(phase string) []string {
	if phase == PhaseDecode {
		return []string{"batch", "context"}
	}
	return []string{"batch", "seq"}
}

// llmDefaults fills an LLM's zero options: prefill, DefaultContext, the
// routing seed 1.
func llmDefaults(o Options) Options {
	if o.Phase == "" {
		o.Phase = PhasePrefill
	}
	if o.Context == 0 {
		o.Context = DefaultContext
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}
