package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// tableColumn is one tableColumn of the layer table after the number and name.
type tableColumn struct {
	head string
	cell func(r results.LayerResult) string
	// drop is the order in which the tableColumn is left out when the table
	// is too wide (1 first); 0: always shown.
	drop int
}

// tableColumns are the layer table's columns for a report, every
// optional one included.
func tableColumns(rep *results.Report, unit string, notes *noteSet, showClock bool) []tableColumn {
	// With no MHz column, a "!" after the time marks a kernel above the
	// board's power limit at the common clock.
	markTime := !showClock && anyAboveLimit(rep.Results)
	cols := []tableColumn{
		{head: "M x N x K", cell: shapeOf},
		{head: "count", cell: func(r results.LayerResult) string { return fmt.Sprint(r.Count) }},
		{head: "mode", cell: func(r results.LayerResult) string { return r.Mode.String() }},
		{head: "µs/call", cell: func(r results.LayerResult) string {
			switch {
			case !markTime:
				return fmt.Sprintf("%.1f", r.TimeUS)
			case r.AbovePowerLimit:
				return fmt.Sprintf("%.1f!", r.TimeUS)
			}
			return fmt.Sprintf("%.1f ", r.TimeUS) // aligned with the marked ones

		}},
		{head: unit, cell: func(r results.LayerResult) string { return fmt.Sprintf("%.1f", r.TFLOPS) }},
		{head: "of dense", drop: 3, cell: func(r results.LayerResult) string {
			return fmt.Sprintf("%.0f%%", 100*r.UsefulUtilization)
		}},
		{head: "TC busy", drop: 2, cell: busyCell},
	}
	if showClock {
		cols = append(cols, tableColumn{head: "MHz", cell: clockCell})
	}
	if hasEnergy(rep.Results) {
		cols = append(cols, tableColumn{head: "mJ", drop: 1, cell: energyCell})
	}
	return append(cols,
		tableColumn{head: "bound", cell: boundCell},
		tableColumn{head: "fixed", cell: fixedShareCell},
		tableColumn{head: "speedup", cell: speedupCell},
		tableColumn{head: "why not 2x", cell: lossCell},
		tableColumn{head: "notes", cell: notes.marks})
}

// fitColumns leaves out the optional columns, in their drop order, until
// the table fits width with layer names of at least minLayerWidth (or
// the longest name, if shorter); it returns the columns kept and the
// headers of those left out. width <= 0 keeps every tableColumn.
func fitColumns(rep *results.Report, cols []tableColumn, width int) (kept []tableColumn, dropped []string) {
	if width <= 0 {
		return cols, nil
	}
	want := min(minLayerWidth, max(len("layer"), longestLayer(rep)))
	for level := 0; ; level++ {
		kept, dropped = nil, nil
		more := false
		for _, c := range cols {
			switch {
			case c.drop == 0 || c.drop > level:
				kept = append(kept, c)
				more = more || c.drop > level
			default:
				dropped = append(dropped, c.head)
			}
		}
		if fitLayer(rep, kept, width) >= want || !more {
			return kept, dropped
		}
	}
}

// layerWidth is the widest layer name that keeps the table within width,
// given the other columns' widths (the longest name when width <= 0).
func layerWidth(rep *results.Report, cols []tableColumn, width int) int {
	longest := max(len("layer"), longestLayer(rep))
	if width <= 0 {
		return longest
	}
	used := utf8.RuneCountInString(fmt.Sprint(len(rep.Results))) + tableGap*(len(cols)+2)
	for _, c := range cols {
		w := utf8.RuneCountInString(c.head)
		for _, r := range rep.Results {
			w = max(w, utf8.RuneCountInString(c.cell(r)))
		}
		used += w
	}
	return min(longest, width-used)
}

// fast says whether the fast tier timed a record: it computes no
// breakdown, phases, occupancy or event energy, so those cells are "-".
func fast(r results.LayerResult) bool { return r.Fidelity == configs.FidelityFast }

// busyCell is the tensor cores' issue-slot occupancy.
func busyCell(r results.LayerResult) string {
	if fast(r) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*r.TCUtilization)
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

// energyCell is the board energy of one call, in millijoules; "-" on the
// fast tier, whose energy is the static part only.
func energyCell(r results.LayerResult) string {
	if fast(r) && r.EnergyUJ > 0 {
		return "-"
	}
	if r.EnergyUJ == 0 {
		return ""
	}
	return fmt.Sprintf("%.3g", r.EnergyUJ/1000)
}

// boundCell is what limits the kernel, in the short cause names.
func boundCell(r results.LayerResult) string {
	if fast(r) {
		return "-"
	}
	return shortCause(r.Bound)
}

// fixedShareCell is the share of the kernel's time in the phases that do
// not shrink with K or with sparsity (results.Phases.Fixed): large for
// short-K layers, where it caps the speedup.
func fixedShareCell(r results.LayerResult) string {
	if fast(r) || r.Phases.Mainloop == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*r.Phases.Fixed())
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

// lossCell is a sparse record's two largest causes of loss against its
// ideal speedup and their shares of the loss that grew, e.g. "smem 65%
// tail 20%": the short form of report.md's "why not 2x" split (the CSV's
// loss_* columns have every cause). The shares are of the causes that
// grew only, so that they sum to at most 100 % where a cause that
// shrank by more than the ideal would push the others above it.
func lossCell(r results.LayerResult) string {
	if r.Mode != tensorcore.Sparse || !r.SparseApplied {
		return ""
	}
	if r.Traffic != nil { // memory-bound: the compulsory traffic's ceiling
		return fmt.Sprintf("bytes ≤%.2fx", r.Traffic.Ceiling)
	}
	if fast(r) {
		return "-"
	}
	if r.LossUS == 0 {
		return ""
	}
	var out []string
	for _, c := range grownCauses(r.Loss)[:2] {
		if pct := math.Round(100 * c.Share); pct >= 1 {
			out = append(out, fmt.Sprintf("%s %.0f%%", shortCause(c.Name), pct))
		}
	}
	return strings.Join(out, " ")
}

// grownCauses are a loss's causes as shares of the sum of the positive
// ones (the causes that grew beyond the ideal), largest first (CauseNames
// order on a tie); negative ones count as 0. There are always at least
// two.
func grownCauses(b results.Breakdown) []results.Cause {
	cs := b.Causes()
	sum := 0.0
	for _, c := range cs {
		sum += max(c.Share, 0)
	}
	for i := range cs {
		cs[i].Share = max(cs[i].Share, 0)
		if sum > 0 {
			cs[i].Share /= sum
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Share > cs[j].Share })
	return cs
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
	case "tensor_pipe":
		return "tc_pipe"
	case "dependence":
		return "depend"
	}
	return name
}
