package store_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/tensorcore"
)

func TestSeries(t *testing.T) {
	rows := storedRows(t)
	tests := []struct {
		name   string
		q      store.Query
		labels []string
		xs     []string
	}{
		{"speedup per workload, other key fixed",
			store.Query{X: "shared_memory.bytes_per_clk", Y: "speedup", By: "workload",
				Where: []point.Assignment{{Key: "l2.size_kb", Value: "40960"}}},
			[]string{"big", "small"}, []string{"64", "128"}},
		{"time per workload and mode, free keys in labels, zipped key not",
			store.Query{X: "l2.size_kb", Y: "time_us", By: "workload"},
			[]string{"big, dense, shared_memory.bytes_per_clk=64",
				"big, sparse, shared_memory.bytes_per_clk=64",
				"small, dense, shared_memory.bytes_per_clk=64"},
			[]string{"20480", "40960"}},
		{"tflops per layer",
			store.Query{X: "shared_memory.bytes_per_clk", Y: "tflops", By: "layer",
				Where: []point.Assignment{{Key: "dram.bandwidth_gbps", Value: "1555"}}},
			[]string{"big 2048x2048x2048, dense", "big 2048x2048x2048, sparse",
				"small 256x256x256, dense"},
			[]string{"64", "128"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := store.Series(rows, tc.q)
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

func labels(ss []results.Series) []string {
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
	where := []point.Assignment{{Key: "l2.size_kb", Value: "40960"}}
	var dense, sparse, flops, denseE, sparseE float64
	for _, r := range rows {
		if r.Workload != "small" {
			continue
		}
		if v, _ := point.GridValue(r.Grid, "l2.size_kb"); v != "40960" {
			continue
		}
		if v, _ := point.GridValue(r.Grid, "shared_memory.bytes_per_clk"); v != "64" {
			continue
		}
		if r.Mode == tensorcore.Dense {
			dense += r.TimeUS
			flops += 2 * float64(r.M*r.N*r.K)
			denseE += r.EnergyUJ
		} else {
			sparse += r.TimeUS
			sparseE += r.EnergyUJ
		}
	}
	want := map[string]float64{"speedup": dense / sparse,
		"tflops": flops / dense / 1e6, "energy_saving": denseE / sparseE,
		"energy_uj": denseE, "avg_power_w": denseE / dense, "clock_mhz": 1410}
	for metric, w := range want {
		ss, err := store.Series(rows, store.Query{X: "shared_memory.bytes_per_clk",
			Y: metric, By: "workload", Where: where})
		if err != nil {
			t.Fatalf("%s: %v", metric, err)
		}
		label := "small, dense"
		if metric == "speedup" || metric == "energy_saving" {
			label = "small"
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
		q    store.Query
		want string
	}{
		{store.Query{X: "gpu.sm_count", Y: "speedup", By: "workload"}, "no stored point varies"},
		{store.Query{X: "l2.size_kb", Y: "watts", By: "workload"}, `y "watts": want`},
		{store.Query{X: "l2.size_kb", Y: "speedup", By: "kernel"}, `by "kernel": want`},
		{store.Query{X: "l2.size_kb", Y: "speedup", By: "workload",
			Where: []point.Assignment{{Key: "gpu.clock_mhz", Value: "1"}}}, "where gpu.clock_mhz: no stored point"},
		{store.Query{X: "l2.size_kb", Y: "speedup", By: "workload",
			Where: []point.Assignment{{Key: "dram.bandwidth_gbps", Value: "7"}}}, "no stored results match"},
	}
	for _, tc := range tests {
		if _, err := store.Series(rows, tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.q, err, tc.want)
		}
	}
}

func TestExportOrderNumeric(t *testing.T) {
	rows := storedRows(t)
	v0, _ := point.GridValue(rows[0].Grid, "shared_memory.bytes_per_clk")
	vN, _ := point.GridValue(rows[len(rows)-1].Grid, "shared_memory.bytes_per_clk")
	if v0 != "64" || vN != "128" {
		t.Errorf("order: first %s last %s, want 64 then 128", v0, vN)
	}
	js := store.ExportJSON(rows)
	if !bytes.Contains(js, []byte(`"shared_memory.bytes_per_clk": "64"`)) {
		t.Errorf("JSON export lacks grid values:\n%.300s", js)
	}
}
