package workloads

import "fmt"

// bertSpec describes a BERT encoder stack.
type bertSpec struct {
	layers, hidden, heads, ffn int
}

// bertGen builds BERT at any batch and sequence length: per encoder layer
// the fused QKV projection, the attention scores (Q x K^T) and context
// (P x V) as batched GEMMs over batch x heads, the attention output
// projection, FFN1 and FFN2; then the pooler on the [CLS] token. Linear
// layers put tokens (batch x seq) on N. Every GEMM but the context is tn
// (K is the fastest index of both row-major factors: W and x, K and Q);
// the context is nn: A = V^T reads the row-major V [keys, d] along M,
// B = P^T reads the row-major P [queries, keys] along K.
func bertGen(s bertSpec) generator {
	return func(o Options) ([]layer, error) {
		if s.hidden%s.heads != 0 {
			return nil, fmt.Errorf("hidden %d not divisible by %d heads",
				s.hidden, s.heads)
		}
		tokens := o.Batch * o.Seq
		if tokens > MaxDim {
			return nil, fmt.Errorf("batch x seq = %d tokens is above the "+
				"limit %d", tokens, MaxDim)
		}
		d := s.hidden / s.heads
		linear := func(name string, out, in, n int) layer {
			return layer{name: name, m: out, n: n, k: in, out: out, in: in,
				prunable: true}
		}
		var ls []layer
		for i := range s.layers {
			p := fmt.Sprintf("encoder.%d.", i)
			ls = append(ls,
				linear(p+"attention.qkv", 3*s.hidden, s.hidden, tokens),
				layer{name: p + "attention.scores", m: o.Seq, n: o.Seq, k: d,
					batch: o.Batch * s.heads,
					note:  "K x Q^T per head: M = keys, N = queries, K = head dim; activations, dense"},
				layer{name: p + "attention.context", m: d, n: o.Seq, k: o.Seq,
					batch: o.Batch * s.heads, layout: LayoutNN,
					note: "V^T x P^T per head: M = head dim, N = queries, K = keys; activations, dense"},
				linear(p+"attention.output", s.hidden, s.hidden, tokens),
				linear(p+"ffn1", s.ffn, s.hidden, tokens),
				linear(p+"ffn2", s.hidden, s.ffn, tokens))
		}
		ls = append(ls, linear("pooler", s.hidden, s.hidden, o.Batch))
		return ls, nil
	}
}
