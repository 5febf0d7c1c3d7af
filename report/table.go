package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// TableWidth is the width the default table keeps to: the per-layer
// rows, the totals and the legend all fit it.
const TableWidth = 120

// tableGap is the space after each column (most headers are wider than
// their values, which leaves more).
const tableGap = 1

// minLayerWidth is the narrowest the layer names are cut to before a
// column is left out to make room.
const minLayerWidth = 18

// Table writes the human-readable run output within TableWidth columns:
// per workload, one row per layer and mode; the totals; the notes the
// rows mark; and a legend of the units and terms. Details (kernel,
// split-K, launch, traffic, breakdown, loss) are in the CSV and JSON.
func Table(out io.Writer, rep *results.Report) { TableWithin(out, rep, TableWidth) }

// TableWithin is Table within width columns: the columns that do not fit
// (energy first, then the tensor-core occupancy, then the useful
// utilization) are left out and the legend says so; width <= 0 shows
// every column (--wide).
func TableWithin(out io.Writer, rep *results.Report, width int) {
	notes := noteIndex(rep.Results)
	unit := unitOf(rep.Results)
	showClock := clocksVary(rep.Results)
	cols, dropped := fitColumns(rep, tableColumns(rep, unit, notes, showClock), width)
	layerW := fitLayer(rep, cols, width)
	writeLayerTables(out, rep, cols, layerW)
	if !showClock {
		if c := commonClock(rep.Results); c > 0 {
			line := fmt.Sprintf("every kernel ran at %d MHz", c)
			if anyAboveLimit(rep.Results) {
				line += "; !: the kernel draws more than the board's power limit at this " +
					"clock, which the board would not sustain (docs/power.md)"
			}
			wrap(out, "", line)
			fmt.Fprintln(out)
		}
	}
	writeTableTotals(out, rep)
	writeStep(out, rep)
	writeCappedTotals(out, rep)
	notes.write(out)
	writeLegend(out, rep, unit, cols, dropped, width)
}

// fitLayer is the widest layer name (up to the longest) with which the
// rendered tables fit width.
func fitLayer(rep *results.Report, cols []tableColumn, width int) int {
	layerW := max(8, layerWidth(rep, cols, width))
	// The estimate is conservative: widen the names while the rendered
	// rows still fit, and narrow them while they do not.
	for width > 0 && layerW < longestLayer(rep) &&
		maxLineWidth(renderLayers(rep, cols, layerW+1)) <= width {
		layerW++
	}
	for width > 0 && layerW > 8 && maxLineWidth(renderLayers(rep, cols, layerW)) > width {
		layerW--
	}
	return layerW
}

func renderLayers(rep *results.Report, cols []tableColumn, layerW int) string {
	var probe bytes.Buffer
	writeLayerTables(&probe, rep, cols, layerW)
	return probe.String()
}

func longestLayer(rep *results.Report) int {
	n := 0
	for _, r := range rep.Results {
		n = max(n, utf8.RuneCountInString(r.Layer))
	}
	return n
}

func maxLineWidth(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

// writeLayerTables writes one table of layers per workload: the layer
// number and name, then cols.
func writeLayerTables(out io.Writer, rep *results.Report, cols []tableColumn, layerW int) {
	for _, w := range workloadsOf(rep) {
		fmt.Fprintf(out, "%s\n", w)
		tw := tabwriter.NewWriter(out, 0, 0, tableGap, ' ', tabwriter.AlignRight)
		head := []string{"#", fmt.Sprintf("%-*s", layerW, "layer")}
		for _, c := range cols {
			head = append(head, c.head)
		}
		fmt.Fprint(tw, strings.Join(head, "\t")+"\t\n")
		rows := resultsOf(rep, w)
		num, _ := layerNumbers(rows)
		for _, r := range rows {
			// Padded to one width, the right-aligned column reads as
			// left-aligned names.
			name := fit(r.Layer, layerW)
			name += strings.Repeat(" ", layerW-utf8.RuneCountInString(name))
			cells := []string{fmt.Sprint(num[r.Layer]), name}
			for _, c := range cols {
				cells = append(cells, c.cell(r))
			}
			fmt.Fprint(tw, strings.Join(cells, "\t")+"\t\n")
		}
		tw.Flush()
		fmt.Fprintln(out)
	}
}

// clocksVary: the records ran at different clocks (power_capped); the
// table then has a MHz column, otherwise one line says the clock and a
// "!" after a time marks a kernel above the board's limit at it.
func clocksVary(rs []results.LayerResult) bool {
	for _, r := range rs {
		if r.ClockMHz != rs[0].ClockMHz {
			return true
		}
	}
	return false
}

// anyAboveLimit: some kernel drew more than the board's power limit at
// its locked clock.
func anyAboveLimit(rs []results.LayerResult) bool {
	for _, r := range rs {
		if r.AbovePowerLimit {
			return true
		}
	}
	return false
}

// hasEnergy: some record has a board energy (the power model ran).
func hasEnergy(rs []results.LayerResult) bool {
	for _, r := range rs {
		if r.EnergyUJ > 0 {
			return true
		}
	}
	return false
}

// commonClock is the clock every record ran at (0 when none is known).
func commonClock(rs []results.LayerResult) int {
	if len(rs) == 0 {
		return 0
	}
	return rs[0].ClockMHz
}

// shapeOf is a record's GEMM, with its batch count when batched.
func shapeOf(r results.LayerResult) string {
	s := fmt.Sprintf("%dx%dx%d", r.M, r.N, r.K)
	if r.Batch > 1 {
		s += fmt.Sprintf(" b%d", r.Batch)
	}
	return s
}

func writeTableTotals(out io.Writer, rep *results.Report) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tmode\ttotal µs per pass\tspeedup\t\n")
	for _, t := range rep.Totals {
		sp := ""
		if t.Mode == tensorcore.Sparse && t.Speedup != 0 {
			sp = fmt.Sprintf("%.3fx", t.Speedup)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t\n", t.Workload, t.Mode, t.TimeUS, sp)
	}
	tw.Flush()
	writeTokenRates(out, rep)
}

// writeCappedTotals gives, under the locked totals, the totals under
// power_capped when some kernel was above the board's limit at the locked
// clock: one line per workload and mode, with the clocks.
func writeCappedTotals(out io.Writer, rep *results.Report) {
	if len(rep.PowerCapped) == 0 {
		return
	}
	fmt.Fprintln(out)
	wrap(out, "", fmt.Sprintf("some kernels draw more than the board's %.0f W at the locked clock; "+
		"under gpu.clock_policy=power_capped (each kernel at the highest clock within the limit):",
		rep.PowerCapped[0].LimitW))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, t := range rep.PowerCapped {
		sp := ""
		if t.Mode == tensorcore.Sparse && t.Speedup != 0 {
			sp = fmt.Sprintf("%.3fx", t.Speedup)
		}
		clocks := fmt.Sprintf("%d MHz", t.MinClockMHz)
		if t.MaxClockMHz != t.MinClockMHz {
			clocks = fmt.Sprintf("%d-%d MHz", t.MinClockMHz, t.MaxClockMHz)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f µs per pass\tat %s\t%s\t\n", t.Workload, t.Mode, t.TimeUS, clocks, sp)
	}
	tw.Flush()
}

// fit cuts a name to w runes, keeping its start and end. A merged name
// (identical GEMMs of several layers, joined by "+") keeps its first
// layer and says how many more it stands for, so the merge stays visible.
func fit(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if parts := strings.Split(s, "+"); len(parts) > 1 {
		more := fmt.Sprintf("+%d more", len(parts)-1)
		if m := utf8.RuneCountInString(more); w > m+4 {
			return fitPart(parts[0], w-m) + more
		}
	}
	return fitPart(s, w)
}

// fitPart cuts s to w runes with an ellipsis in the middle.
func fitPart(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	head := (w - 1) * 2 / 3 // the start names the block, the end the layer
	return string(r[:head]) + "…" + string(r[len(r)-(w-1-head):])
}

// noteSet numbers the distinct notes of a run's records.
type noteSet struct {
	order []string
	index map[string]int
}

func noteIndex(rows []results.LayerResult) *noteSet {
	n := &noteSet{index: map[string]int{}}
	for _, r := range rows {
		for _, part := range splitNote(r.Note) {
			if _, ok := n.index[part]; !ok {
				n.order = append(n.order, part)
				n.index[part] = len(n.order)
			}
		}
	}
	return n
}

func splitNote(note string) []string {
	if note == "" {
		return nil
	}
	return strings.Split(note, "; ")
}

// marks are a record's note numbers, e.g. "[1,3]".
func (n *noteSet) marks(r results.LayerResult) string {
	var m []string
	for _, part := range splitNote(r.Note) {
		m = append(m, fmt.Sprint(n.index[part]))
	}
	if len(m) == 0 {
		return ""
	}
	return "[" + strings.Join(m, ",") + "]"
}

func (n *noteSet) write(out io.Writer) {
	if len(n.order) == 0 {
		return
	}
	fmt.Fprintln(out, "\nnotes:")
	for i, s := range n.order {
		wrap(out, fmt.Sprintf("  [%d] ", i+1), s)
	}
}

// wrap writes text after prefix, wrapped to TableWidth with a hanging
// indent.
func wrap(out io.Writer, prefix, text string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	line := prefix
	for _, word := range strings.Fields(text) {
		if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > TableWidth &&
			strings.TrimSpace(line) != strings.TrimSpace(prefix) {
			fmt.Fprintln(out, line)
			line = indent
		}
		if line != prefix && line != indent {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(out, line)
}

// legendTerms explain the table's columns.
var legendTerms = [][2]string{
	{"#", "layer number, as in report.md and on the roofline plot (--out)"},
	{"M x N x K", "the GEMM: M output features (rows of the 2:4-sparse A), " +
		"N tokens or pixels x batch, K the reduction; bN: a batched kernel of N GEMMs"},
	{"count", "times the layer runs per network pass"},
	{"mode", "dense: the unpruned network; sparse: the 2:4-pruned one"},
	{"µs/call", "simulated time of one run of the layer; totals are the sum of µs/call x count; " +
		"!: above the board's power limit at the clock it ran at"},
	{"TFLOPS", "dense-equivalent throughput, 2·M·N·K·batch / time (TOPS for int8): " +
		"sparse rows count the skipped multiplies too"},
	{"of dense", "useful utilization: the layer's own work (the unpadded GEMM; a " +
		"sparse row's skipped multiplies counted as done) per second against the dense " +
		"peak of its precision at the clock it ran at, one scale for both modes (2:4 " +
		"can reach 200%); padded tiles are not useful work"},
	{"TC busy", "issue-slot occupancy: share of tensor-core issue slots busy, padded " +
		"MMAs included, against the mode's own peak (the sparse peak on sparse rows)"},
	{"MHz", "the SM clock the kernel ran at (gpu.clock_policy: locked, or the highest " +
		"clock within power.limit_w under power_capped); !: at this locked clock the " +
		"kernel draws more than the board's limit, which the board would not sustain"},
	{"mJ", "board energy of one run of the layer, millijoules (docs/power.md); per pass: x count"},
	{"bound", "what limits the kernel: compute when the tensor cores are busy at least 80% " +
		"of the time, otherwise the largest cause of their idle time: smem, l2_bw/dram_bw " +
		"(bandwidth: queueing), l2_lat/dram_lat (latency), barrier, depend (dependence), issue, " +
		"regfile (register file), tc_pipe (tensor pipe), launch, tail (epilogue), " +
		"waves (wave quantization: SMs with no CTA left); breakdown_* in the CSV"},
	{"fixed", "share of the kernel's time in the phases that do not shrink with K or with " +
		"sparsity (launch, prologue fill, epilogue): large on short-K layers, where it caps the speedup"},
	{"speedup", "dense µs / sparse µs of the same layer (below 1x: the sparse kernel " +
		"is slower, and a note says so); (d): the layer stays " +
		"dense in the sparse network (ASP rule, activation x activation) and ran the dense kernel"},
	{"why not 2x", "sparse rows: the two largest causes of the sparse time beyond " +
		"dense time / ideal speedup (2x for 2:4), in the bound column's terms, with their " +
		"shares of that loss among the causes that grew (so they sum to at most 100%); " +
		"every cause: report.md and the CSV's loss_* columns; bytes ≤N.NNx: the dense kernel " +
		"is memory-bound and the compulsory traffic (kept weights, metadata, activations or " +
		"KV cache, output) allows at most that speedup (report.md and the JSON's traffic)"},
	{"notes", "numbers of the notes above (padding, extrapolation, how the GEMM was derived)"},
}

func writeLegend(out io.Writer, rep *results.Report, unit string, cols []tableColumn, dropped []string, width int) {
	fmt.Fprintln(out, "\nlegend:")
	shown := map[string]bool{"#": true, "layer": true}
	for _, c := range cols {
		shown[c.head] = true
	}
	for _, t := range legendTerms {
		term := t[0]
		if term == "TFLOPS" {
			term = unit
		}
		if !shown[term] {
			continue
		}
		wrap(out, fmt.Sprintf("  %-10s ", term), t[1])
	}
	if len(dropped) > 0 {
		wrap(out, "  ", fmt.Sprintf("left out to fit %d columns: %s; --wide shows them "+
			"(so does a wider terminal).", width, strings.Join(dropped, ", ")))
	}
	wrap(out, "  ", "details per record (kernel, split-K, CTAs, waves, "+
		"occupancy, DRAM and L2 traffic, time breakdown, loss against the "+
		"ideal speedup): --format csv or json, or --out DIR.")
	if n := fastRecords(rep); n > 0 {
		wrap(out, "  tier: ", fmt.Sprintf("%d of %d records timed by the fast tier "+
			"(sim.fidelity: fast; docs/fast-paths.md), the rest by the instruction-level SM; "+
			"-: a field the fast tier does not compute",
			n, len(rep.Results)))
	}
	if p := rep.Provenance; p != nil {
		desc := rep.Config + ": " + p.ConfigDescription
		if len(p.Sets) > 0 {
			// The description is the config file's; an override can
			// contradict it (108 SMs under gpu.sm_count=4).
			desc += "; as changed by --set " + strings.Join(p.Sets, ", --set ")
		}
		wrap(out, "  config: ", desc)
		if len(p.FidelityChanges) > 0 {
			wrap(out, "  fidelity: ", "simulated with settings off the defaults, which "+
				"change what is simulated (docs/sm.md): "+strings.Join(p.FidelityChanges, ", "))
		}
	}
}

// fastRecords counts the records the fast tier timed.
func fastRecords(rep *results.Report) int {
	n := 0
	for _, r := range rep.Results {
		if r.Fidelity == configs.FidelityFast {
			n++
		}
	}
	return n
}
