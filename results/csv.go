package results

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/energy"
)

// column is one CSV column: its name (the JSON key, nested objects
// flattened as OBJECT_KEY) and how a record renders it.
type column struct {
	name string
	cell func(r *LayerResult) string
}

// columns is the one table of the CSV: every JSON key of a record but the
// lists (candidates) and the straggler object, which only the JSON has
// (TestCSVColumnsMatchJSONKeys holds the two to each other).
var columns = func() []column {
	i := strconv.Itoa
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	opt := func(v float64) string { // omitempty in the JSON
		if v == 0 {
			return ""
		}
		return f(v)
	}
	optInt := func(v int) string {
		if v == 0 {
			return ""
		}
		return i(v)
	}
	optBool := func(v bool) string {
		if !v {
			return ""
		}
		return "true"
	}
	t := CSVText
	var c []column
	add := func(name string, cell func(r *LayerResult) string) {
		c = append(c, column{name, cell})
	}
	causes := func(prefix string, of func(r *LayerResult) *Breakdown) {
		for k, name := range CauseNames {
			add(prefix+name, func(r *LayerResult) string {
				if b := of(r); b != nil {
					return f(b.Shares()[k])
				}
				return ""
			})
		}
	}
	add("workload", func(r *LayerResult) string { return t(r.Workload) })
	add("layer", func(r *LayerResult) string { return t(r.Layer) })
	add("m", func(r *LayerResult) string { return i(r.M) })
	add("n", func(r *LayerResult) string { return i(r.N) })
	add("k", func(r *LayerResult) string { return i(r.K) })
	add("batch", func(r *LayerResult) string { return i(r.Batch) })
	add("precision", func(r *LayerResult) string { return r.Precision.String() })
	add("mode", func(r *LayerResult) string { return r.Mode.String() })
	add("sparse_applied", func(r *LayerResult) string { return strconv.FormatBool(r.SparseApplied) })
	add("pattern", func(r *LayerResult) string { return t(r.Pattern) })
	add("sparse_operand", func(r *LayerResult) string { return t(r.SparseOperand) })
	add("pass", func(r *LayerResult) string { return t(r.Pass) })
	add("sparse_along", func(r *LayerResult) string { return t(r.SparseAlong) })
	add("layout", func(r *LayerResult) string { return t(r.Layout) })
	add("dual_side", func(r *LayerResult) string { return optBool(r.DualSide) })
	add("masks", func(r *LayerResult) string { return t(r.Masks) })
	add("dual_products_per_mma", func(r *LayerResult) string { return optInt(r.DualProducts) })
	add("count", func(r *LayerResult) string { return i(r.Count) })
	add("kernel", func(r *LayerResult) string { return t(r.Kernel) })
	add("split_k", func(r *LayerResult) string { return i(r.SplitK) })
	add("schedule", func(r *LayerResult) string { return t(r.Schedule) })
	add("tail_cycles", func(r *LayerResult) string { return u(r.TailCycles) })
	add("fixup_bytes", func(r *LayerResult) string { return u(r.FixupBytes) })
	add("fixup_wait_cycles", func(r *LayerResult) string { return u(r.FixupWaitCycles) })
	add("cycles", func(r *LayerResult) string { return u(r.Cycles) })
	add("cycles_mean", func(r *LayerResult) string { return opt(r.CyclesMean) })
	add("cycles_spread", func(r *LayerResult) string { return opt(r.CyclesSpread) })
	add("time_us", func(r *LayerResult) string { return f(r.TimeUS) })
	add("tflops", func(r *LayerResult) string { return f(r.TFLOPS) })
	add("tc_utilization", func(r *LayerResult) string { return f(r.TCUtilization) })
	add("useful_utilization", func(r *LayerResult) string { return f(r.UsefulUtilization) })
	add("dram_read_bytes", func(r *LayerResult) string { return u(r.DRAMReadBytes) })
	add("dram_write_bytes", func(r *LayerResult) string { return u(r.DRAMWriteBytes) })
	add("dram_writeback_bytes", func(r *LayerResult) string { return u(r.DRAMWritebackBytes) })
	add("dram_gbps", func(r *LayerResult) string { return f(r.DRAMGBps) })
	add("l2_hit_rate", func(r *LayerResult) string { return f(r.L2HitRate) })
	add("metadata_bytes", func(r *LayerResult) string { return u(r.MetadataBytes) })
	add("smem_bytes", func(r *LayerResult) string { return u(r.SmemBytes) })
	add("l2_bytes", func(r *LayerResult) string { return u(r.L2Bytes) })
	add("bound", func(r *LayerResult) string { return t(r.Bound) })
	causes("breakdown_", func(r *LayerResult) *Breakdown { return &r.Breakdown })
	for k, name := range PhaseNames {
		add("phases_"+name, func(r *LayerResult) string { return f(r.Phases.Shares()[k]) })
	}
	add("speedup", func(r *LayerResult) string { return opt(r.Speedup) })
	traffic := func(v func(t *Traffic) string) func(r *LayerResult) string {
		return func(r *LayerResult) string {
			if r.Traffic == nil {
				return ""
			}
			return v(r.Traffic)
		}
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	add("traffic_weight_bytes", traffic(func(t *Traffic) string { return i64(t.WeightBytes) }))
	add("traffic_metadata_bytes", traffic(func(t *Traffic) string { return i64(t.MetadataBytes) }))
	add("traffic_activation_bytes", traffic(func(t *Traffic) string { return i64(t.ActivationBytes) }))
	add("traffic_output_bytes", traffic(func(t *Traffic) string { return i64(t.OutputBytes) }))
	add("traffic_dense_bytes", traffic(func(t *Traffic) string { return i64(t.DenseBytes) }))
	add("traffic_ceiling", traffic(func(t *Traffic) string { return f(t.Ceiling) }))
	add("note", func(r *LayerResult) string { return t(r.Note) })
	add("ctas", func(r *LayerResult) string { return i(r.CTAs) })
	add("waves", func(r *LayerResult) string { return i(r.Waves) })
	add("ctas_per_sm", func(r *LayerResult) string { return i(r.CTAsPerSM) })
	add("occupancy_limit", func(r *LayerResult) string { return t(r.OccupancyLimit) })
	add("ideal_speedup", func(r *LayerResult) string { return opt(r.IdealSpeedup) })
	add("loss_us", func(r *LayerResult) string { return opt(r.LossUS) })
	causes("loss_", func(r *LayerResult) *Breakdown {
		if r.LossUS > 0 {
			return &r.Loss
		}
		return nil
	})
	add("clock_mhz", func(r *LayerResult) string { return i(r.ClockMHz) })
	add("energy_uj", func(r *LayerResult) string { return f(r.EnergyUJ) })
	add("avg_power_w", func(r *LayerResult) string { return f(r.AvgPowerW) })
	add("above_power_limit", func(r *LayerResult) string { return optBool(r.AbovePowerLimit) })
	add("energy_saving", func(r *LayerResult) string { return opt(r.EnergySaving) })
	for k, class := range (energy.Breakdown{}).Classes() {
		add("energy_"+class.Name, func(r *LayerResult) string {
			return f(r.Energy.Classes()[k].UJ)
		})
	}
	add("area_mm2", func(r *LayerResult) string { return f(r.AreaMM2) })
	add("tflops_per_mm2", func(r *LayerResult) string { return f(r.TFLOPSPerMM2) })
	add("tflops_per_w", func(r *LayerResult) string { return f(r.TFLOPSPerW) })
	add("energy_delay", func(r *LayerResult) string { return f(r.EnergyDelay) })
	add("cache", func(r *LayerResult) string { return t(r.Cache) })
	add("fidelity", func(r *LayerResult) string { return t(r.Fidelity) })
	add("fidelity_error_pct", func(r *LayerResult) string { return opt(r.FidelityErrorPct) })
	return c
}()

// Columns are the CSV columns, in order (the names of columns).
var Columns = func() []string {
	out := make([]string, len(columns))
	for k, c := range columns {
		out[k] = c.name
	}
	return out
}()

// Row renders one record as CSV fields in Columns order.
func Row(r LayerResult) []string {
	out := make([]string, len(columns))
	for k, c := range columns {
		out[k] = c.cell(&r)
	}
	return out
}

// CSVText neutralises a text field for spreadsheets: one beginning with
// =, +, -, @, a tab or a carriage return (a formula to Excel, LibreOffice
// and Sheets) gets a leading apostrophe, unless it is a plain number.
func CSVText(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// CSV renders the per-layer results with a header row.
func CSV(rep *Report) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(Columns)
	for _, r := range rep.Results {
		_ = w.Write(Row(r))
	}
	w.Flush()
	return buf.Bytes()
}
