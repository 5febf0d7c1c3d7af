package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// MaxImbalance bounds Options.MoEImbalance (the router's Zipf exponent).
const MaxImbalance = 4.0

// Route assigns each of tokens tokens to topK distinct experts of
// experts, seeded: each expert e is drawn with weight 1/(e+1)^imbalance
// (0: uniform, as a balanced router's load-balancing loss aims for;
// larger: a few hot experts), without replacement per token. It returns
// the tokens each expert receives; the same arguments give the same
// counts.
func Route(tokens, experts, topK int, imbalance float64, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f65))
	w := make([]float64, experts)
	for e := range w {
		w[e] = 1 / math.Pow(float64(e+1), imbalance)
	}
	counts := make([]int, experts)
	picked := make([]bool, experts)
	for range tokens {
		clear(picked)
		for range topK {
			sum := 0.0
			for e, x := range w {
				if !picked[e] {
					sum += x
				}
			}
			r := rng.Float64() * sum
			choice := -1
			for e, x := range w {
				if picked[e] {
					continue
				}
				choice = e
				if r -= x; r < 0 {
					break
				}
			}
			picked[choice] = true
			counts[choice]++
		}
	}
	return counts
}

// moeLayers are one MoE block's GEMMs after attention: the router (dense:
// 8 output rows), then the experts' gated FFNs over the tokens Route
// gives each. As one grouped launch per stage (vLLM's fused_moe: w1 and
// w3 fused into one w13 GEMM, then w2): a batched kernel of one problem
// per expert with tokens, each problem padded to the busiest expert's
// tokens (the simulator's batched GEMM has one shape for all problems;
// a ragged grouped GEMM is not modelled). With o.MoESeparate, the naive
// schedule: w1, w3 and w2 of each expert with tokens as its own kernel.
func (s llmSpec) moeLayers(p string, tokens, index int, o Options) ([]layer, error) {
	counts := Route(tokens, s.experts, s.topK, o.MoEImbalance, o.Seed*1000003+uint64(index))
	router := layer{name: p + "block_sparse_moe.gate", m: s.experts, n: tokens, k: s.hidden,
		note: "router logits; dense (8 rows)"}
	ls := []layer{router}
	linear := func(name string, out, in, n, batch int, note string) layer {
		return layer{name: name, m: out, n: n, k: in, batch: batch, out: out, in: in,
			prunable: true, note: note}
	}
	e := p + "block_sparse_moe.experts."
	if o.MoESeparate {
		for x, n := range counts {
			if n == 0 {
				continue
			}
			q := e + strconv.Itoa(x) + "."
			note := fmt.Sprintf("expert %d: %d tokens (separate kernels)", x, n)
			ls = append(ls, linear(q+"w1", s.ffn, s.hidden, n, 1, note),
				linear(q+"w3", s.ffn, s.hidden, n, 1, note),
				linear(q+"w2", s.hidden, s.ffn, n, 1, note))
		}
		return ls, nil
	}
	active, most := 0, 0
	var per []string
	for _, n := range counts {
		per = append(per, strconv.Itoa(n))
		if n > 0 {
			active++
			most = max(most, n)
		}
	}
	note := fmt.Sprintf("grouped launch: %d expert problems, tokens per expert %s, "+
		"each padded to N = %d", active, strings.Join(per, ","), most)
	return append(ls,
		linear(e+"w13", 2*s.ffn, s.hidden, most, active, note),
		linear(e+"w2", s.hidden, s.ffn, most, active, note)), nil
}
