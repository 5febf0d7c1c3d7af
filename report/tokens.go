package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/stcsim/stcsim/results"
)

// writeTokenRates writes the decoder LLM workloads' totals as tokens:
// tokens per pass, tokens per second, the time per output token (decode;
// at prefill the time to the first token) and the energy per token.
func writeTokenRates(out io.Writer, rep *results.Report) {
	var rows []results.Total
	for _, t := range rep.Totals {
		if t.Phase != "" {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tmode\tphase\ttokens per pass\ttokens/s\tms per output token\tmJ per token\t\n")
	for _, t := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%.3f\t%.2f\t\n", t.Workload, t.Mode, t.Phase,
			t.Tokens, t.TokensPerS, t.MSPerOutputToken, t.EnergyPerTokenMJ)
	}
	tw.Flush()
	fmt.Fprintln(out, "(prefill: ms per output token is the time to the first token)")
}

// trafficSummary is report.md's "why not 2x" of a memory-bound sparse
// layer: its compulsory bytes by operand against the dense kernel's, and
// the speedup they allow.
func trafficSummary(t *results.Traffic) string {
	mb := func(b int64) float64 { return float64(b) / 1e6 }
	return fmt.Sprintf("memory-bound: %.2f MB dense vs %.2f MB sparse (weights %.2f, "+
		"metadata %.2f, activations/KV %.2f, output %.2f MB): at most %.2fx",
		mb(t.DenseBytes), mb(t.WeightBytes+t.MetadataBytes+t.ActivationBytes+t.OutputBytes),
		mb(t.WeightBytes), mb(t.MetadataBytes), mb(t.ActivationBytes), mb(t.OutputBytes), t.Ceiling)
}
