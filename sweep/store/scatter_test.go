package store

import (
	"math"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
)

// scatterRows are two layers of one workload at three points of a B-width
// grid, each point with its own area: dense and sparse records.
func scatterRows() []Row {
	var rows []Row
	for i, b := range []string{"32", "64", "128"} {
		area := 800 + 10*float64(i)
		for _, layer := range []string{"l1", "l2"} {
			for _, m := range []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse} {
				r := results.LayerResult{Workload: "w", Layer: layer, M: 256, N: 256, K: 256,
					Count: 2, Mode: m, TimeUS: 10}
				r.EnergyUJ, r.AreaMM2 = 100, area
				if m == tensorcore.Sparse {
					r.TimeUS = 10 / (1.2 + 0.3*float64(i)) // faster with B
					r.Speedup = 10 / r.TimeUS
					r.EnergyUJ = 80
					r.EnergySaving = 100.0 / 80
				}
				rows = append(rows, Row{ConfigHash: "c" + b,
					Grid: []point.Assignment{{Key: "tensorcore.fp16.b_operand_bytes_per_clk", Value: b}}, LayerResult: r})
			}
		}
	}
	return rows
}

// A scatter of speedup against area has one point per stored point, at
// that point's area and its workload's speedup (dense time over sparse
// time of its layers, times their counts), labelled by its grid value.
func TestScatterSpeedupAgainstArea(t *testing.T) {
	pts, err := Scatter(scatterRows(), Query{X: "area_mm2", Y: "speedup", By: "workload"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(pts), pts)
	}
	for i, p := range pts {
		wantLabel := "tensorcore.fp16.b_operand_bytes_per_clk=" + []string{"32", "64", "128"}[i]
		if p.Label != wantLabel || p.Group != "w" {
			t.Errorf("point %d: %q in %q, want %q in w", i, p.Label, p.Group, wantLabel)
		}
		if p.X != 800+10*float64(i) {
			t.Errorf("point %d: area %g", i, p.X)
		}
		if want := 1.2 + 0.3*float64(i); math.Abs(p.Y-want) > 1e-12 {
			t.Errorf("point %d: speedup %g, want %g", i, p.Y, want)
		}
	}
	// Each larger point is faster: all three are on the front.
	if f := report.ParetoFront(pts); len(f) != 3 {
		t.Errorf("Pareto front %+v, want all three points", f)
	}
}

// Per-watt and per-area metrics follow the point's sums: dense records,
// one point per mode, tflops_per_w = FLOPs / energy.
func TestScatterEfficiencies(t *testing.T) {
	pts, err := Scatter(scatterRows(), Query{X: "area_mm2", Y: "tflops_per_w", By: "workload"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 6 || pts[0].Group != "w, dense" {
		t.Fatalf("points %+v: want 6, grouped by mode", pts)
	}
	flops := 2 * 2 * 256.0 * 256 * 256 * 2 // two layers, count 2
	if want := flops / (2 * 2 * 100) / 1e6; math.Abs(pts[0].Y-want) > 1e-12*want {
		t.Errorf("dense tflops_per_w %g, want %g", pts[0].Y, want)
	}
	pa, err := Scatter(scatterRows(), Query{X: "energy_delay", Y: "tflops_per_mm2", By: "workload"})
	if err != nil {
		t.Fatal(err)
	}
	if want := flops / (2 * 2 * 10) / 1e6 / 800; math.Abs(pa[0].Y-want) > 1e-12*want {
		t.Errorf("dense tflops_per_mm2 %g, want %g", pa[0].Y, want)
	}
	if want := 400.0 * 40; pa[0].X != want {
		t.Errorf("dense energy_delay %g, want %g (energy x time of the pass)", pa[0].X, want)
	}
}

func TestScatterErrors(t *testing.T) {
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{X: "watts", Y: "speedup", By: "workload"}, `x "watts": want`},
		{Query{X: "area_mm2", Y: "watts", By: "workload"}, `y "watts": want`},
		{Query{X: "area_mm2", Y: "speedup", By: "kernel"}, `by "kernel": want`},
		{Query{X: "area_mm2", Y: "speedup", By: "workload",
			Where: []point.Assignment{{Key: "tensorcore.fp16.b_operand_bytes_per_clk", Value: "7"}}}, "no stored results match"},
	} {
		if _, err := Scatter(scatterRows(), tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.q, err, tc.want)
		}
	}
}
