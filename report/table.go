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

// Table writes the human-readable run output: per workload, one row per
// layer and mode; the totals; the notes the rows mark; and a legend of
// the units and terms. Details (kernel, split-K, launch, traffic,
// breakdown, loss) are in the CSV and JSON.
func Table(out io.Writer, rep *results.Report) {
	notes := noteIndex(rep.Results)
	unit := unitOf(rep.Results)
	showClock := clocksVary(rep.Results)
	layerW := layerWidth(rep, unit, notes, showClock)
	// The estimate is conservative: widen the names while the rendered
	// rows still fit.
	for layerW < longestLayer(rep) {
		var probe bytes.Buffer
		writeLayerTables(&probe, rep, unit, notes, showClock, layerW+1)
		if maxLineWidth(probe.String()) > TableWidth {
			break
		}
		layerW++
	}
	writeLayerTables(out, rep, unit, notes, showClock, layerW)
	if !showClock {
		if c := commonClock(rep.Results); c > 0 {
			fmt.Fprintf(out, "every kernel ran at %d MHz\n\n", c)
		}
	}
	writeTableTotals(out, rep)
	writeStep(out, rep)
	notes.write(out)
	writeLegend(out, rep, unit)
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

// writeLayerTables writes one table of layers per workload.
func writeLayerTables(out io.Writer, rep *results.Report, unit string, notes *noteSet, showClock bool, layerW int) {
	for _, w := range workloadsOf(rep) {
		fmt.Fprintf(out, "%s\n", w)
		tw := tabwriter.NewWriter(out, 0, 0, tableGap, ' ', tabwriter.AlignRight)
		head := []string{"#", fmt.Sprintf("%-*s", layerW, "layer"), "M x N x K", "count", "mode",
			"µs/call", unit, "of dense", "TC busy"}
		if showClock {
			head = append(head, "MHz")
		}
		if hasEnergy(rep.Results) {
			head = append(head, "mJ")
		}
		head = append(head, "bound", "speedup", "why not 2x", "notes")
		fmt.Fprint(tw, strings.Join(head, "\t")+"\t\n")
		rows := resultsOf(rep, w)
		num, _ := layerNumbers(rows)
		for _, r := range rows {
			// Padded to one width, the right-aligned column reads as
			// left-aligned names.
			name := fit(r.Layer, layerW)
			name += strings.Repeat(" ", layerW-utf8.RuneCountInString(name))
			cells := []string{fmt.Sprint(num[r.Layer]), name, shapeOf(r), fmt.Sprint(r.Count),
				r.Mode.String(), fmt.Sprintf("%.1f", r.TimeUS), fmt.Sprintf("%.1f", r.TFLOPS),
				fmt.Sprintf("%.0f%%", 100*r.UsefulUtilization), fmt.Sprintf("%.0f%%", 100*r.TCUtilization)}
			if showClock {
				cells = append(cells, clockCell(r))
			}
			if hasEnergy(rep.Results) {
				cells = append(cells, energyCell(r))
			}
			cells = append(cells, r.Bound, speedupCell(r), lossCell(r), notes.marks(r))
			fmt.Fprint(tw, strings.Join(cells, "\t")+"\t\n")
		}
		tw.Flush()
		fmt.Fprintln(out)
	}
}

// clocksVary: the records ran at different clocks (power_capped), or one
// drew more than the board's limit at its locked clock; the table then
// has a MHz column, otherwise one line says the clock.
func clocksVary(rs []results.LayerResult) bool {
	for _, r := range rs {
		if r.AbovePowerLimit || r.ClockMHz != rs[0].ClockMHz {
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

// clockCell is the SM clock the kernel ran at (gpu.clock_policy), with a
// "!" when it drew more than the board's limit at a locked clock.
func clockCell(r results.LayerResult) string {
	if r.ClockMHz == 0 {
		return ""
	}
	if r.AbovePowerLimit {
		return fmt.Sprintf("%d!", r.ClockMHz)
	}
	return fmt.Sprint(r.ClockMHz)
}

// energyCell is the board energy of one call, in millijoules.
func energyCell(r results.LayerResult) string {
	if r.EnergyUJ == 0 {
		return ""
	}
	return fmt.Sprintf("%.3g", r.EnergyUJ/1000)
}

func speedupCell(r results.LayerResult) string {
	sp := ""
	if r.Mode == tensorcore.Sparse && r.Speedup != 0 { // 0: no dense record to compare
		sp = fmt.Sprintf("%.2fx", r.Speedup)
	}
	if r.Mode == tensorcore.Sparse && !r.SparseApplied {
		sp = strings.TrimSpace(sp + " (d)")
	}
	return sp
}

// lossCell is a sparse record's largest cause of loss against its ideal
// speedup and that cause's share of the loss, e.g. "smem 65%": the short
// form of report.md's "why not 2x" split (the CSV's loss_* columns have
// every cause).
func lossCell(r results.LayerResult) string {
	if r.Mode != tensorcore.Sparse || r.LossUS == 0 {
		return ""
	}
	name, share := topCause(r.Loss)
	return fmt.Sprintf("%s %.0f%%", shortCause(name), 100*share)
}

// topCause is a breakdown's largest cause and its share (the first in
// causes() order on a tie).
func topCause(b results.Breakdown) (string, float64) {
	names, shares := results.CauseNames, b.Shares()
	best := 0
	for i, v := range shares {
		if v > shares[best] {
			best = i
		}
	}
	return names[best], shares[best]
}

// shortCause keeps the table narrow: the causes' JSON names, a few
// abbreviated (the legend spells them out).
func shortCause(name string) string {
	switch name {
	case "wave_quantization":
		return "waves"
	case "register_file":
		return "regfile"
	case "dram_bandwidth":
		return "dram_bw"
	case "l2_bandwidth":
		return "l2_bw"
	case "dram_latency":
		return "dram_lat"
	case "l2_latency":
		return "l2_lat"
	}
	return name
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
}

// layerWidth is the widest layer name that keeps the table within
// TableWidth, given the other columns' widths.
func layerWidth(rep *results.Report, unit string, notes *noteSet, showClock bool) int {
	widths := []int{len("#"), len("M x N x K"), len("count"), len("sparse"),
		len("µs/call"), len(unit), len("of dense"), len("TC busy"), len("MHz"), len("mJ"), len("compute"),
		len("speedup"), len("why not 2x"), len("notes")}
	if !showClock {
		widths[8] = -tableGap // no column, no gap
	}
	longest := len("layer")
	for _, r := range rep.Results {
		clock := clockCell(r)
		if !showClock {
			clock = ""
		}
		cells := []string{fmt.Sprint(len(rep.Results)), shapeOf(r),
			fmt.Sprint(r.Count), r.Mode.String(), fmt.Sprintf("%.1f", r.TimeUS),
			fmt.Sprintf("%.1f", r.TFLOPS), "100%", "100%", clock, energyCell(r), r.Bound, speedupCell(r),
			lossCell(r), notes.marks(r)}
		for i, c := range cells {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
		longest = max(longest, utf8.RuneCountInString(r.Layer))
	}
	if !showClock {
		widths[8] = -tableGap // no column, no gap
	}
	used := tableGap * (len(widths) + 1) // a gap after each of the 13 columns
	for _, w := range widths {
		used += w
	}
	return max(16, min(longest, TableWidth-used))
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
	{"µs/call", "simulated time of one run of the layer; totals are the sum of µs/call x count"},
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
		"of the time, otherwise the largest cause of their idle time: smem, l2_/dram_bandwidth (queueing), l2_/dram_latency, " +
		"barrier, dependence, issue, register_file, tensor_pipe, launch, tail (epilogue), " +
		"wave_quantization (SMs with no CTA left); breakdown_* in the CSV"},
	{"speedup", "dense µs / sparse µs of the same layer; (d): the layer stays " +
		"dense in the sparse network (ASP rule, activation x activation) and ran the dense kernel"},
	{"why not 2x", "sparse rows: the largest cause of the sparse time beyond " +
		"dense time / ideal speedup (2x for 2:4) and its share of that loss, in the " +
		"bound column's terms (waves: wave_quantization, regfile: register_file, " +
		"l2_bw/dram_bw: bandwidth, l2_lat/dram_lat: latency); every cause: report.md " +
		"and the CSV's loss_* columns"},
	{"notes", "numbers of the notes above (padding, extrapolation, how the GEMM was derived)"},
}

func writeLegend(out io.Writer, rep *results.Report, unit string) {
	fmt.Fprintln(out, "\nlegend:")
	for _, t := range legendTerms {
		term := t[0]
		if term == "TFLOPS" {
			term = unit
		}
		wrap(out, fmt.Sprintf("  %-10s ", term), t[1])
	}
	wrap(out, "  ", "details per record (kernel, split-K, CTAs, waves, "+
		"occupancy, DRAM and L2 traffic, time breakdown, loss against the "+
		"ideal speedup): --format csv or json, or --out DIR.")
	if n := fastRecords(rep); n > 0 {
		wrap(out, "  tier: ", fmt.Sprintf("%d of %d records timed by the fast tier "+
			"(sim.fidelity: fast; docs/fast-paths.md), the rest by the instruction-level SM",
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
