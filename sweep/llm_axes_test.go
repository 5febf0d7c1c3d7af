package sweep

import (
	"strings"
	"testing"
)

// A decoder LLM's decode step sweeps over workload.context (the
// attention products grow with it) and workload.batch (N of the weight
// GEMMs); seq is not read at decode, context not at prefill.
func TestLLMContextAxis(t *testing.T) {
	p, err := planWith(t, `
workloads:
  - model: llama-2-7b
    phase: decode
    layers: 'self_attn\.scores'
grid:
  workload.context: [128, 2048]
  workload.batch: [1, 16]
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 4 {
		t.Fatalf("%d points, want 4", len(p.Points))
	}
	seen := map[string]bool{}
	for _, pt := range p.Points {
		g := pt.Workloads()[0].Trace.GEMMs[0]
		seen[strings.Join([]string{pt.Label(), pt.Workloads()[0].Trace.Name}, " ")] = true
		if g.M != 129 && g.M != 2049 {
			t.Errorf("point %s: scores M = %d keys, want context+1", pt.Label(), g.M)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{`
workloads:
  - model: llama-2-7b
    phase: decode
grid:
  workload.seq: [128, 256]
`, "no model workload of the sweep reads seq"},
		{`
workloads:
  - model: llama-2-7b
grid:
  workload.context: [128, 256]
`, "no model workload of the sweep reads context"},
		{`
workloads:
  - model: bert-base
    phase: decode
`, "phase applies to the decoder LLMs"},
		{`
workloads:
  - model: llama-2-7b
    phase: decode
grid:
  workload.context: [128, 9000]
`, "context 9000: must be in 1..4095"},
	} {
		if _, err := planWith(t, c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.spec, err, c.want)
		}
	}
}
