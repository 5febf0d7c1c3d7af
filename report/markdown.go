package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"

	"github.com/stcsim/stcsim/tensorcore"
)

// Markdown renders report.md: what ran on which config, the totals, one
// table per workload pairing each layer's dense and sparse results, and
// the plots (PNG names in plots are embedded; SVGs are linked).
func Markdown(rep *sim.Report, ld *configs.Loaded, plots []string) []byte {
	var b bytes.Buffer
	cfg := ld.Config
	fmt.Fprintf(&b, "# stcsim report\n\n")
	fmt.Fprintf(&b, "stcsim %s on config `%s` (%s). The effective config "+
		"is in `config.yaml`; sources: %s. Per-layer numbers are in "+
		"`results.csv` and `results.json`.\n\n", rep.Version, cfg.Name,
		cfg.Description, strings.Join(ld.Sources, ", "))
	writeRoofs(&b, rep, cfg)
	writeTotals(&b, rep)
	for _, w := range workloadsOf(rep) {
		fmt.Fprintf(&b, "## %s\n\n", w)
		writeLayers(&b, resultsOf(rep, w))
		writePlots(&b, w, plotStems(rep)[w], plots)
	}
	return b.Bytes()
}

func writeRoofs(b *bytes.Buffer, rep *sim.Report, cfg *configs.Config) {
	var precs []tensorcore.Precision
	for _, r := range rep.Results {
		if !slices.Contains(precs, r.Precision) {
			precs = append(precs, r.Precision)
		}
	}
	var parts []string
	for _, p := range precs {
		d, err1 := Peak(cfg, p, false)
		s, err2 := Peak(cfg, p, true)
		if err1 == nil && err2 == nil {
			parts = append(parts, fmt.Sprintf("%s %.0f dense / %.0f sparse "+
				"TFLOPS", p, d, s))
		}
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(b, "Roofs of this config: %s; DRAM %.0f GB/s sustained "+
		"(%.0f GB/s x %.3f efficiency).\n\n", strings.Join(parts, ", "),
		DRAMRoof(cfg), cfg.Memory.DRAM.BandwidthGBps, cfg.Memory.DRAM.Efficiency)
}

func writeTotals(b *bytes.Buffer, rep *sim.Report) {
	b.WriteString("## Totals (one network pass)\n\n")
	b.WriteString("| workload | dense time (µs) | sparse time (µs) | speedup |\n")
	b.WriteString("|---|--:|--:|--:|\n")
	for _, w := range workloadsOf(rep) {
		var dense, sparse, sp string
		for _, t := range rep.Totals {
			if t.Workload != w {
				continue
			}
			switch t.Mode {
			case tensorcore.Dense:
				dense = fmt.Sprintf("%.1f", t.TimeUS)
			case tensorcore.Sparse:
				sparse = fmt.Sprintf("%.1f", t.TimeUS)
				if t.Speedup > 0 {
					sp = fmt.Sprintf("%.3fx", t.Speedup)
				}
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdEscape(w), dash(dense),
			dash(sparse), dash(sp))
	}
	b.WriteString("\n")
}

// layerPair is one layer's dense and sparse results.
type layerPair struct {
	dense, sparse *sim.LayerResult
}

func writeLayers(b *bytes.Buffer, rows []sim.LayerResult) {
	var order []string
	pairs := map[string]*layerPair{}
	for i := range rows {
		r := &rows[i]
		lp := pairs[r.Layer]
		if lp == nil {
			lp = &layerPair{}
			pairs[r.Layer] = lp
			order = append(order, r.Layer)
		}
		if r.Mode == tensorcore.Dense {
			lp.dense = r
		} else {
			lp.sparse = r
		}
	}
	b.WriteString("| layer | M x N x K | count | dense µs | dense TFLOPS | " +
		"sparse µs | sparse TFLOPS | speedup | sparse bound | sparse kernel |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, l := range order {
		lp := pairs[l]
		first := lp.dense
		if first == nil {
			first = lp.sparse
		}
		shape := fmt.Sprintf("%dx%dx%d", first.M, first.N, first.K)
		if first.Batch > 1 {
			shape += fmt.Sprintf(" (batch of %d)", first.Batch)
		}
		fmt.Fprintf(b, "| %s | %s | %d |", mdEscape(l), shape, first.Count)
		for _, r := range []*sim.LayerResult{lp.dense, lp.sparse} {
			if r == nil {
				b.WriteString(" - | - |")
				continue
			}
			fmt.Fprintf(b, " %.1f | %.1f |", r.TimeUS, r.TFLOPS)
		}
		sp, bound, kernel := "-", "-", "-"
		if s := lp.sparse; s != nil {
			if s.Speedup > 0 {
				sp = fmt.Sprintf("%.2fx", s.Speedup)
				if !s.SparseApplied {
					sp += " (ran dense)"
				}
			}
			bound, kernel = dash(s.Bound), dash(s.Kernel)
		}
		fmt.Fprintf(b, " %s | %s | %s |\n", sp, bound, kernel)
	}
	b.WriteString("\n")
}

// writePlots embeds the workload's PNG plots and links their SVGs.
func writePlots(b *bytes.Buffer, w, wstem string, plots []string) {
	prefix := wstem + "-"
	for _, p := range plots {
		stem := strings.TrimSuffix(p, ".png")
		kind := strings.TrimPrefix(stem, prefix)
		if !strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, ".png") ||
			!plotKinds[kind] {
			continue
		}
		kind = strings.ReplaceAll(kind, "-", " ")
		fmt.Fprintf(b, "![%s %s](%s)", mdEscape(w), kind, p)
		if containsString(plots, stem+".svg") {
			fmt.Fprintf(b, " ([SVG](%s.svg))", stem)
		}
		b.WriteString("\n\n")
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mdEscape keeps a name from breaking a table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
