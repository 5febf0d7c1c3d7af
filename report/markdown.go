package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"

	"github.com/stcsim/stcsim/tensorcore"
)

// Markdown renders report.md: what ran on which config, the totals, one
// table per workload pairing each layer's dense and sparse results, and
// the plots (PNG names in plots are embedded; SVGs are linked).
func Markdown(rep *results.Report, ld *configs.Loaded, plots []string) []byte {
	var b bytes.Buffer
	cfg := ld.Config
	fmt.Fprintf(&b, "# stcsim report\n\n")
	fmt.Fprintf(&b, "stcsim %s on config `%s` (%s). The effective config "+
		"is in `config.yaml`; sources: %s. Per-layer numbers are in "+
		"`results.csv` and `results.json`.\n\n", rep.Version, cfg.Name,
		cfg.Description, strings.Join(ld.Sources, ", "))
	if n := fastRecords(rep); n > 0 {
		fmt.Fprintf(&b, "**Fast tier:** %d of %d records were timed by the analytical tier "+
			"(`sim.fidelity: fast`, docs/fast-paths.md), not the instruction-level SM: "+
			"their `fidelity` is `fast`, their breakdown, traffic and event energy are zero "+
			"and their error against the instruction tier is stated in their `note`.\n\n",
			n, len(rep.Results))
	}
	writeRoofs(&b, rep, cfg)
	writeTotals(&b, rep)
	writeEnergy(&b, rep)
	for _, w := range workloadsOf(rep) {
		fmt.Fprintf(&b, "## %s\n\n", w)
		writeLayers(&b, resultsOf(rep, w))
		var step bytes.Buffer
		if writeStepOf(&step, w, resultsOf(rep, w)) {
			fmt.Fprintf(&b, "```text\n%s```\n\n", step.Bytes())
		}
		writePlots(&b, w, plotStems(rep)[w], plots)
	}
	writeProvenance(&b, rep.Provenance)
	return b.Bytes()
}

// writeProvenance lists what produced the report.
func writeProvenance(b *bytes.Buffer, p *results.Provenance) {
	if p == nil {
		return
	}
	b.WriteString("## Provenance\n\n")
	if len(p.Command) > 0 {
		fmt.Fprintf(b, "- command: `%s`\n", strings.Join(p.Command, " "))
	}
	fmt.Fprintf(b, "- stcsim version: %s\n", p.Version)
	for i, f := range p.ConfigFiles {
		fmt.Fprintf(b, "- config file %d: `%s` (sha256 %s)\n", i+1, f.Source, f.SHA256)
	}
	for _, s := range p.Sets {
		fmt.Fprintf(b, "- override: `--set %s`\n", s)
	}
	fmt.Fprintf(b, "- effective config sha256: %s (`config.yaml`)\n", p.ConfigHash)
	for _, f := range p.FidelityChanges {
		fmt.Fprintf(b, "- **fidelity off its default**: `%s` (changes what is simulated)\n", f)
	}
	for _, w := range p.Workloads {
		fmt.Fprintf(b, "- workload %s: %s\n", mdEscape(w.Name), workloadOptions(w))
	}
	b.WriteString("\n")
}

func workloadOptions(w results.WorkloadSource) string {
	var parts []string
	switch w.Source {
	case "model":
		parts = append(parts, "built-in model")
	case "gemm":
		parts = append(parts, "--gemm")
	default:
		parts = append(parts, fmt.Sprintf("trace `%s` (sha256 %s)", w.Source, w.SHA256))
	}
	for _, o := range []struct {
		name string
		v    int
	}{{"batch", w.Batch}, {"seq", w.Seq}, {"resolution", w.Resolution}} {
		if o.v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o.name, o.v))
		}
	}
	if w.Precision != "" {
		parts = append(parts, w.Precision)
	}
	for _, ws := range w.Weights {
		parts = append(parts, fmt.Sprintf("weights `%s` (sha256 %s)", ws.Path, ws.SHA256))
	}
	return strings.Join(parts, ", ")
}

func writeRoofs(b *bytes.Buffer, rep *results.Report, cfg *configs.Config) {
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
				"%s", p, d, s, throughputUnit(p)))
		}
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(b, "Roofs of this config: %s; DRAM %.0f GB/s sustained "+
		"(%.0f GB/s x %.3f efficiency).\n\n", strings.Join(parts, ", "),
		DRAMRoof(cfg), cfg.Memory.DRAM.BandwidthGBps, cfg.Memory.DRAM.Efficiency)
}

func writeTotals(b *bytes.Buffer, rep *results.Report) {
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
	writeCappedMarkdown(b, rep)
}

// writeCappedMarkdown gives report.md the totals under power_capped when
// some kernel was above the board's limit at the locked clock.
func writeCappedMarkdown(b *bytes.Buffer, rep *results.Report) {
	if len(rep.PowerCapped) == 0 {
		return
	}
	fmt.Fprintf(b, "Some kernels draw more than the board's %.0f W at the locked clock, "+
		"which the board would not sustain; under `gpu.clock_policy: power_capped` (each "+
		"kernel at the highest clock within the limit):\n\n", rep.PowerCapped[0].LimitW)
	b.WriteString("| workload | mode | time (µs) | clocks (MHz) | speedup |\n|---|---|--:|--:|--:|\n")
	for _, t := range rep.PowerCapped {
		clocks := fmt.Sprint(t.MinClockMHz)
		if t.MaxClockMHz != t.MinClockMHz {
			clocks = fmt.Sprintf("%d-%d", t.MinClockMHz, t.MaxClockMHz)
		}
		sp := ""
		if t.Speedup > 0 {
			sp = fmt.Sprintf("%.3fx", t.Speedup)
		}
		fmt.Fprintf(b, "| %s | %s | %.1f | %s | %s |\n", mdEscape(t.Workload), t.Mode, t.TimeUS,
			clocks, dash(sp))
	}
	b.WriteString("\n")
}

// layerPair is one layer's dense and sparse results.
type layerPair struct {
	dense, sparse *results.LayerResult
}

func writeLayers(b *bytes.Buffer, rows []results.LayerResult) {
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
	unit := unitOf(rows)
	b.WriteString("Layers are numbered (#) as on the roofline plot. Times " +
		"are per call (the layer runs count times per pass). The sparse " +
		"launch is CTAs, waves and CTAs per SM with what limited them; " +
		"\"why not 2x\" splits the sparse time beyond dense/2 by cause " +
		"(each cause's sparse time minus half its dense time; shares of " +
		"that loss, largest first); \"fixed\" is the share of each " +
		"kernel's time in the phases that do not shrink with K or with " +
		"sparsity (launch, prologue fill, epilogue; `phases` in the " +
		"records), dense / sparse.\n\n")
	fmt.Fprintf(b, "| # | layer | M x N x K | count | dense µs | dense %s | "+
		"sparse µs | sparse %s | speedup | sparse bound | sparse kernel | "+
		"sparse launch | fixed | why not 2x |\n", unit, unit)
	b.WriteString("|--:|---|---|--:|--:|--:|--:|--:|--:|---|---|---|--:|---|\n")
	for i, l := range order {
		lp := pairs[l]
		first := lp.dense
		if first == nil {
			first = lp.sparse
		}
		shape := fmt.Sprintf("%dx%dx%d", first.M, first.N, first.K)
		if first.Batch > 1 {
			shape += fmt.Sprintf(" (batch of %d)", first.Batch)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %d |", i+1, mdEscape(l), shape, first.Count)
		for _, r := range []*results.LayerResult{lp.dense, lp.sparse} {
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
		launch, why := "-", "-"
		if s := lp.sparse; s != nil {
			launch = fmt.Sprintf("%d CTAs, %d waves, %d/SM (%s)", s.CTAs,
				s.Waves, s.CTAsPerSM, s.OccupancyLimit)
			why = lossSummary(s)
		}
		fmt.Fprintf(b, " %s | %s | %s | %s | %s | %s |\n", sp, bound, kernel, launch,
			fixedCell(lp), why)
	}
	b.WriteString("\n")
}

// fixedCell is a layer's fixed share (results.Phases.Fixed), dense /
// sparse; "-" for a mode without records or phases (the fast tier).
func fixedCell(lp *layerPair) string {
	var out []string
	for _, r := range []*results.LayerResult{lp.dense, lp.sparse} {
		if r == nil || r.Phases.Mainloop == 0 {
			out = append(out, "-")
			continue
		}
		out = append(out, fmt.Sprintf("%.0f%%", 100*r.Phases.Fixed()))
	}
	return strings.Join(out, " / ")
}

// writePlots embeds the workload's PNG plots and links their SVGs.
func writePlots(b *bytes.Buffer, w, wstem string, plots []string) {
	prefix := wstem + "-"
	for _, p := range plots {
		stem := strings.TrimSuffix(p, ".png")
		kind := strings.TrimPrefix(stem, prefix)
		if !strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, ".png") ||
			!inReport(kind) {
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

// lossSummary is report.md's "why not 2x": for a memory-bound layer its
// traffic ceiling (trafficSummary), then the causes of its loss against
// the ideal speedup (causeSummary).
func lossSummary(r *results.LayerResult) string {
	if t := r.Traffic; t != nil {
		if loss := causeSummary(r); loss != "-" {
			return trafficSummary(t) + "; by cause, " + loss
		}
		return trafficSummary(t)
	}
	return causeSummary(r)
}

// causeSummary splits a sparse record's loss against its ideal speedup
// by cause, largest first.
func causeSummary(r *results.LayerResult) string {
	if r.LossUS == 0 {
		return "-"
	}
	shares := r.Loss.Shares()
	type part struct {
		name string
		v    float64
	}
	var parts []part
	for i, c := range results.CauseNames {
		parts = append(parts, part{c, shares[i]})
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].v > parts[j].v })
	var out []string
	for _, p := range parts {
		if math.Abs(p.v) >= 0.005 {
			out = append(out, fmt.Sprintf("%s %.0f%%", p.name, 100*p.v))
		}
	}
	return fmt.Sprintf("%.1f µs: %s", r.LossUS, strings.Join(out, ", "))
}

// unitOf is the throughput unit of a table's rows: TOPS when all are
// int8, TFLOPS when none is, both otherwise.
func unitOf(rows []results.LayerResult) string {
	ints, floats := 0, 0
	for _, r := range rows {
		if throughputUnit(r.Precision) == "TOPS" {
			ints++
		} else {
			floats++
		}
	}
	switch {
	case ints == 0:
		return "TFLOPS"
	case floats == 0:
		return "TOPS"
	}
	return "TFLOPS (TOPS for int8)"
}
