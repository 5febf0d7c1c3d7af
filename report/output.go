package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
)

// WriteAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a truncated file.
func WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// JSON renders the report as one indented JSON object.
func JSON(rep *results.Report) []byte {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal report: %v", err))
	}
	return append(b, '\n')
}

// Columns are the CSV columns, in order: the JSON record keys, with the
// breakdown and the loss flattened (breakdown_compute, ..., loss_compute,
// ...: one column per cause of results.Breakdown).
var Columns = append(append(append(append(append([]string{"workload", "layer", "m", "n",
	"k", "batch", "precision", "mode", "sparse_applied", "count", "kernel",
	"split_k", "cycles", "time_us", "tflops", "tc_utilization", "useful_utilization",
	"dram_read_bytes", "dram_write_bytes", "dram_writeback_bytes",
	"dram_gbps", "l2_hit_rate", "metadata_bytes", "smem_bytes", "l2_bytes",
	"bound"}, causeColumns("breakdown_")...), "speedup", "note", "ctas",
	"waves", "ctas_per_sm", "occupancy_limit", "ideal_speedup", "loss_us"),
	causeColumns("loss_")...), energyColumns...), append(append([]string{}, costColumns...), "cache")...)

// causes are the JSON names of results.Breakdown's fields.
func causes() []string { return results.CauseNames }

func causeColumns(prefix string) []string {
	var out []string
	for _, c := range causes() {
		out = append(out, prefix+c)
	}
	return out
}

// causeShares are a breakdown's shares in causes() order.
func causeShares(b results.Breakdown) []float64 { return b.Shares() }

// causeValues are a breakdown's shares as CSV fields; empty ones for a
// nil breakdown.
func causeValues(b *results.Breakdown, f func(float64) string) []string {
	out := make([]string, len(causes()))
	if b == nil {
		return out
	}
	for i, v := range causeShares(*b) {
		out[i] = f(v)
	}
	return out
}

// Row renders one record as CSV fields in Columns order.
func Row(r results.LayerResult) []string {
	i := strconv.Itoa
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	opt := func(v float64) string {
		if v == 0 {
			return ""
		}
		return f(v)
	}
	t := CSVText
	row := []string{t(r.Workload), t(r.Layer), i(r.M), i(r.N), i(r.K), i(r.Batch),
		r.Precision.String(), r.Mode.String(), strconv.FormatBool(r.SparseApplied),
		i(r.Count), t(r.Kernel), i(r.SplitK), u(r.Cycles), f(r.TimeUS),
		f(r.TFLOPS), f(r.TCUtilization), f(r.UsefulUtilization), u(r.DRAMReadBytes),
		u(r.DRAMWriteBytes), u(r.DRAMWritebackBytes), f(r.DRAMGBps),
		f(r.L2HitRate), u(r.MetadataBytes), u(r.SmemBytes), u(r.L2Bytes),
		t(r.Bound)}
	b := r.Breakdown
	row = append(row, causeValues(&b, f)...)
	row = append(row, opt(r.Speedup), t(r.Note), i(r.CTAs), i(r.Waves),
		i(r.CTAsPerSM), t(r.OccupancyLimit), opt(r.IdealSpeedup), opt(r.LossUS))
	var loss *results.Breakdown
	if r.LossUS > 0 {
		loss = &r.Loss
	}
	row = append(row, causeValues(loss, f)...)
	row = append(row, energyRow(r)...)
	row = append(row, f(r.AreaMM2), f(r.TFLOPSPerMM2), f(r.TFLOPSPerW), f(r.EnergyDelay))
	return append(row, t(r.Cache))
}

// costColumns are the CSV columns of a record's area and efficiencies
// (results.Cost).
var costColumns = []string{"area_mm2", "tflops_per_mm2", "tflops_per_w", "energy_delay"}

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
func CSV(rep *results.Report) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(Columns)
	for _, r := range rep.Results {
		_ = w.Write(Row(r))
	}
	w.Flush()
	return buf.Bytes()
}

// WriteRun writes a run's files into dir: results.csv, results.json, the
// effective config.yaml, the plots and report.md. They are written into a
// temporary directory first and then put in place (see writeDir), results
// last, so that their presence means a complete run and no kill leaves
// new files next to an earlier run's results.
func WriteRun(dir string, rep *results.Report, ld *configs.Loaded) error {
	if err := CheckFinite(rep); err != nil {
		return err
	}
	return writeDir(dir, func(tmp string) error {
		if err := WriteAtomic(filepath.Join(tmp, "config.yaml"), ld.YAML()); err != nil {
			return err
		}
		plots, err := WritePlots(tmp, rep, ld.Config)
		if err != nil {
			return err
		}
		md := Markdown(rep, ld, plots)
		if err := WriteAtomic(filepath.Join(tmp, "report.md"), md); err != nil {
			return err
		}
		if err := WriteAtomic(filepath.Join(tmp, "results.json"), JSON(rep)); err != nil {
			return err
		}
		return WriteAtomic(filepath.Join(tmp, "results.csv"), CSV(rep))
	})
}
