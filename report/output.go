package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"

	"github.com/stcsim/stcsim/tensorcore"
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
func JSON(rep *sim.Report) []byte {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal report: %v", err))
	}
	return append(b, '\n')
}

// Columns are the CSV columns, in order: the JSON record keys, with the
// breakdown flattened.
var Columns = []string{"workload", "layer", "m", "n", "k", "batch",
	"precision", "mode", "sparse_applied", "count", "kernel", "split_k",
	"cycles", "time_us", "tflops", "tc_utilization", "dram_read_bytes",
	"dram_write_bytes", "dram_gbps", "l2_hit_rate", "metadata_bytes",
	"smem_bytes", "l2_bytes", "bound", "breakdown_compute",
	"breakdown_smem", "breakdown_l2", "breakdown_dram", "breakdown_latency",
	"speedup", "note"}

// Row renders one record as CSV fields in Columns order.
func Row(r sim.LayerResult) []string {
	i := strconv.Itoa
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	sp := ""
	if r.Speedup != 0 {
		sp = f(r.Speedup)
	}
	b := r.Breakdown
	t := CSVText
	return []string{t(r.Workload), t(r.Layer), i(r.M), i(r.N), i(r.K), i(r.Batch),
		r.Precision.String(), r.Mode.String(), strconv.FormatBool(r.SparseApplied),
		i(r.Count), t(r.Kernel), i(r.SplitK), u(r.Cycles), f(r.TimeUS),
		f(r.TFLOPS), f(r.TCUtilization), u(r.DRAMReadBytes),
		u(r.DRAMWriteBytes), f(r.DRAMGBps), f(r.L2HitRate),
		u(r.MetadataBytes), u(r.SmemBytes), u(r.L2Bytes), t(r.Bound),
		f(b.Compute), f(b.Smem), f(b.L2), f(b.DRAM), f(b.Latency), sp,
		t(r.Note)}
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
func CSV(rep *sim.Report) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(Columns)
	for _, r := range rep.Results {
		_ = w.Write(Row(r))
	}
	w.Flush()
	return buf.Bytes()
}

// Table writes the human-readable per-layer table and the totals.
func Table(out io.Writer, rep *sim.Report) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "workload\tlayer\tM\tN\tK\tmode\tkernel\ttime_us\t"+
		"TFLOPS\tTC util\tDRAM GB/s\tL2 hit\tbound\tspeedup\t\n")
	for _, r := range rep.Results {
		sp := ""
		if r.Mode == tensorcore.Sparse && r.Speedup != 0 { // 0: no dense record to compare
			sp = fmt.Sprintf("%.2fx", r.Speedup)
		}
		if r.Mode == tensorcore.Sparse && !r.SparseApplied {
			sp = strings.TrimSpace(sp + " (dense)")
		}
		layer := r.Layer
		if r.Count > 1 {
			layer = fmt.Sprintf("%s x%d", r.Layer, r.Count)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%.1f\t%.1f\t%.0f%%\t"+
			"%.0f\t%.0f%%\t%s\t%s\t\n", r.Workload, layer, r.M, r.N, r.K,
			r.Mode, r.Kernel, r.TimeUS, r.TFLOPS, 100*r.TCUtilization,
			r.DRAMGBps, 100*r.L2HitRate, r.Bound, sp)
	}
	w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "workload\tmode\ttotal time_us\tspeedup\t\n")
	for _, t := range rep.Totals {
		sp := ""
		if t.Mode == tensorcore.Sparse && t.Speedup != 0 {
			sp = fmt.Sprintf("%.3fx", t.Speedup)
		}
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%s\t\n", t.Workload, t.Mode, t.TimeUS, sp)
	}
	w.Flush()
}

// WriteRun writes a run's files into dir: results.csv, results.json, the
// effective config.yaml, the plots and report.md. They are written into a
// temporary directory first and then put in place (see writeDir), results
// last, so that their presence means a complete run and no kill leaves
// new files next to an earlier run's results.
func WriteRun(dir string, rep *sim.Report, ld *configs.Loaded) error {
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
