package validation

import (
	"slices"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// The LLM rows (validation/points/llm-public.csv) are held-out fp16 GEMMs
// of an A100 80GB PCIe whose shapes are Qwen2.5-7B's linear layers, from
// the model's config.json (hidden_size 3584, 28 attention heads and 4
// KV heads of 128, intermediate_size 18944): the fused q/k/v projection
// (28 + 2 x 4 heads of 128 = 4608 outputs), o_proj, the fused gate/up
// projection (2 x 18944) and down_proj (K = 18944), with N the tokens.
func TestLLMPointsAreQwenLinearLayers(t *testing.T) {
	ps, err := LoadPoints("points/llm-public.csv")
	if err != nil {
		t.Fatal(err)
	}
	const hidden, heads, kvHeads, headDim, ffn = 3584, 28, 4, 128, 18944
	shapes := map[string][2]int{ // M, K by layer
		"qkv":    {(heads + 2*kvHeads) * headDim, hidden},
		"o":      {heads * headDim, hidden},
		"gateup": {2 * ffn, hidden},
		"down":   {hidden, ffn},
	}
	if len(ps) == 0 {
		t.Fatal("no rows")
	}
	for _, p := range ps {
		if _, ok := ConfigFor(p.Hardware); !ok || p.Kind != "gemm" || p.Precision != tensorcore.FP16 {
			t.Errorf("%s: hardware %s, kind %s, precision %v: want an fp16 gemm row of a known board",
				p.ID, p.Hardware, p.Kind, p.Precision)
		}
		if slices.Contains(DefaultCalibrated, p.ID) {
			t.Errorf("%s: in the calibration set; the LLM rows are held out", p.ID)
		}
		layer := strings.Split(p.ID, "-")[1]
		want, ok := shapes[layer]
		if !ok || p.M != want[0] || p.K != want[1] {
			t.Errorf("%s: M %d, K %d; Qwen2.5-7B's %s layer is M %d, K %d", p.ID, p.M, p.K, layer, want[0], want[1])
		}
		if p.Dense <= 0 || p.Sparse <= 0 || !strings.Contains(p.Source, "A100 80GB PCIe") {
			t.Errorf("%s: dense %g, sparse %g, source %q", p.ID, p.Dense, p.Sparse, p.Source)
		}
	}
}
