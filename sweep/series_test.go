package sweep

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/report"

	"github.com/stcsim/stcsim/tensorcore"
)

func storedRows(t *testing.T) []Row {
	t.Helper()
	p := mustPlan(t, testSpec)
	db := filepath.Join(t.TempDir(), "s.db")
	runAll(t, p, db, Options{Jobs: 2})
	st, err := OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Rows()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestSeries(t *testing.T) {
	rows := storedRows(t)
	tests := []struct {
		name   string
		q      Query
		labels []string
		xs     []string
	}{
		{"speedup per workload, other key fixed",
			Query{X: "shared_memory.bytes_per_clk", Y: "speedup", By: "workload",
				Where: []Assignment{{"l2.size_kb", "40960"}}},
			[]string{"big", "small"}, []string{"64", "128"}},
		{"time per workload and mode, free keys in labels, zipped key not",
			Query{X: "l2.size_kb", Y: "time_us", By: "workload"},
			[]string{"big, dense, shared_memory.bytes_per_clk=64",
				"big, sparse, shared_memory.bytes_per_clk=64",
				"small, dense, shared_memory.bytes_per_clk=64"},
			[]string{"20480", "40960"}},
		{"tflops per layer",
			Query{X: "shared_memory.bytes_per_clk", Y: "tflops", By: "layer",
				Where: []Assignment{{"dram.bandwidth_gbps", "1555"}}},
			[]string{"big 2048x2048x2048, dense", "big 2048x2048x2048, sparse",
				"small 256x256x256, dense"},
			[]string{"64", "128"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := Series(rows, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.labels {
				if i >= len(ss) || ss[i].Label != want {
					t.Fatalf("series %d: want %q, have %v", i, want, labels(ss))
				}
			}
			if got := strings.Join(ss[0].X, ","); got != strings.Join(tc.xs, ",") {
				t.Errorf("x values %s, want %s", got, strings.Join(tc.xs, ","))
			}
		})
	}
}

func labels(ss []report.Series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Label)
	}
	return out
}

// TestSeriesValues checks a workload's plotted numbers against the sums of
// its stored layers.
func TestSeriesValues(t *testing.T) {
	rows := storedRows(t)
	where := []Assignment{{"l2.size_kb", "40960"}}
	var dense, sparse, flops float64
	for _, r := range rows {
		if r.Workload != "small" {
			continue
		}
		if v, _ := GridValue(r.Grid, "l2.size_kb"); v != "40960" {
			continue
		}
		if v, _ := GridValue(r.Grid, "shared_memory.bytes_per_clk"); v != "64" {
			continue
		}
		if r.Mode == tensorcore.Dense {
			dense += r.TimeUS
			flops += 2 * float64(r.M*r.N*r.K)
		} else {
			sparse += r.TimeUS
		}
	}
	want := map[string]float64{"speedup": dense / sparse,
		"tflops": flops / dense / 1e6}
	for metric, w := range want {
		ss, err := Series(rows, Query{X: "shared_memory.bytes_per_clk",
			Y: metric, By: "workload", Where: where})
		if err != nil {
			t.Fatal(err)
		}
		label := "small"
		if metric == "tflops" {
			label = "small, dense"
		}
		var got float64
		for _, s := range ss {
			if s.Label == label {
				got = s.Y[0] // x = 64
			}
		}
		if math.Abs(got-w) > 1e-9*w {
			t.Errorf("%s: %g, want %g", metric, got, w)
		}
	}
}

func TestSeriesErrors(t *testing.T) {
	rows := storedRows(t)
	tests := []struct {
		q    Query
		want string
	}{
		{Query{X: "gpu.sm_count", Y: "speedup", By: "workload"}, "no stored point varies"},
		{Query{X: "l2.size_kb", Y: "watts", By: "workload"}, "--y"},
		{Query{X: "l2.size_kb", Y: "speedup", By: "kernel"}, "--by"},
		{Query{X: "l2.size_kb", Y: "speedup", By: "workload",
			Where: []Assignment{{"gpu.clock_mhz", "1"}}}, "--where gpu.clock_mhz"},
		{Query{X: "l2.size_kb", Y: "speedup", By: "workload",
			Where: []Assignment{{"dram.bandwidth_gbps", "7"}}}, "no stored results match"},
	}
	for _, tc := range tests {
		if _, err := Series(rows, tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.q, err, tc.want)
		}
	}
}
