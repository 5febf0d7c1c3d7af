package validation

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// WriteTable writes a report as the command line shows it: every row
// (conditions, clock, errors, role, kernels, margin, spread), the
// summary per kind, the notes and what was skipped.
func WriteTable(out io.Writer, rep *Report) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "id\tkind\tconfig\tconditions\tMHz\tmeasured\tsimulated\tunit\terror\tat boost\tfixed\tlaunch/prologue/epilogue/last wave\trole\tkernel\town choice (error)\tmargin\tspread\t\n")
	for _, r := range rep.Rows {
		mhz := ""
		if r.SimulatedClockMHz > 0 {
			mhz = fmt.Sprint(r.SimulatedClockMHz)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%.4g\t%.4g\t%s\t%+.1f%%\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			r.ID, r.Kind, r.Config, r.Conditions, mhz, r.Measured, r.Simulated, r.Unit,
			100*r.Error, boostCell(r), fixedCell(r), PhasesCell(r), role(r), r.Kernel, pinnedCell(r), MarginCell(r), pct(r.Spread))
	}
	w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "kind\tn\tMAPE\tbias\theld-out n\theld-out MAPE\theld-out bias\tover/under\trank corr\tat boost MAPE\tat boost bias\tpinned n\tpinned MAPE\tpinned bias\t\n")
	for _, s := range rep.Summary {
		kind := s.Kind
		if s.Check {
			kind += " (check)"
		}
		corr := ""
		if s.RankCorrelation != nil {
			corr = fmt.Sprintf("%+.3f", *s.RankCorrelation)
		}
		boost := [2]string{}
		if s.BoostN > 0 {
			boost = [2]string{fmt.Sprintf("%.1f%%", 100*s.BoostMAPE), fmt.Sprintf("%+.1f%%", 100*s.BoostBias)}
		}
		pinned := [3]string{}
		if s.PinnedN > 0 {
			pinned = [3]string{fmt.Sprint(s.PinnedN), fmt.Sprintf("%.1f%%", 100*s.PinnedMAPE),
				fmt.Sprintf("%+.1f%%", 100*s.PinnedBias)}
		}
		fmt.Fprintf(w, "%s\t%d\t%.1f%%\t%+.1f%%\t%d\t%.1f%%\t%+.1f%%\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			kind, s.N, 100*s.MAPE, 100*s.Bias, s.HeldOutN, 100*s.HeldOutMAPE,
			100*s.HeldOutBias, s.Over, s.Under, corr, boost[0], boost[1], pinned[0], pinned[1], pinned[2])
	}
	w.Flush()
	writeKGap(out, rep.Summary)
	for _, s := range rep.Notes {
		fmt.Fprintln(out, "note:", s)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintln(out, "skipped:", s)
	}
}

// fixedCell is the fixed part's share of the row's simulated time
// (--fixed-costs).
func fixedCell(r Row) string {
	if r.FixedUS == 0 && r.MainloopUS == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f%%", 100*r.FixedUS/r.Simulated)
}

// PhasesCell is a time row's launch, prologue fill, epilogue and last
// wave as percentages of its simulated time (Row.Phases); the mainloop
// is the rest.
func PhasesCell(r Row) string {
	if r.Phases == nil {
		return ""
	}
	p := r.Phases
	return fmt.Sprintf("%.0f/%.0f/%.0f/%.0f%%", 100*p.Launch, 100*p.Prologue, 100*p.Epilogue, 100*p.LastWave)
}

// boostCell is the row's error at the locked boost clock, when the
// conditions it ran under differ from it.
func boostCell(r Row) string {
	if r.BoostError == nil {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100**r.BoostError)
}

// role says what a row is for: a held-out prediction, a calibration
// input, or an arithmetic check.
func role(r Row) string {
	switch {
	case r.Check:
		return "check"
	case r.HeldOut:
		return "held out"
	}
	return "calibration"
}

// pinnedCell is, on a row that names its kernel (whose error is that
// kernel's), the model's own selection and its error.
func pinnedCell(r Row) string {
	if r.SelectedError == nil {
		return ""
	}
	name := r.SelectedKernel
	if name == "" {
		name = "own choice"
	}
	return fmt.Sprintf("%s (%+.1f%%)", name, 100**r.SelectedError)
}

// MarginCell is the row's margin, with ">" when it is a lower bound.
// Candidates often tie within a few cycles in a hundred thousand, so a
// margin under 0.1 % keeps two significant digits instead of reading
// 0.0 %.
func MarginCell(r Row) string {
	c := pct(r.Margin)
	if m := math.Abs(100 * r.Margin); m > 0 && m < 0.1 {
		c = fmt.Sprintf("%.2g%%", 100*r.Margin)
	}
	if c != "" && r.MarginIsBound {
		return ">" + c
	}
	return c
}

func pct(v float64) string {
	if v == 0 || math.IsNaN(v) {
		return ""
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// writeKGap writes the speedup's K gap, where the summary has one.
func writeKGap(out io.Writer, sums []Summary) {
	for _, s := range sums {
		if g := s.KGap; g != nil {
			fmt.Fprintf(out, "speedup K gap (mean of the K >= %d rows minus the K <= %d rows, held out; %d and %d rows): "+
				"measured %+.3f, simulated %+.3f\n", LongK, ShortK, g.LongN, g.ShortN, g.Measured, g.Simulated)
		}
	}
}
