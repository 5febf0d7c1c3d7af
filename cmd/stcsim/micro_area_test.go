package main

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// micro area lists every component of the model, each with the source of
// every figure it uses (the line comment of its area keys), and the
// totals.
func TestMicroAreaListsEveryComponentWithItsSource(t *testing.T) {
	out, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "area", "--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc microAreaOutput
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"multipliers", "adder tree", "A operand path", "B operand path",
		"selector muxes", "metadata path and decode", "accumulators", "tensor cores",
		"register file", "register-file ports", "L1 / shared-memory SRAM",
		"shared-memory banks and ports", "rest of the SM", "SMs on the die", "uncore"}
	if len(doc.Components) != len(want) {
		t.Errorf("%d components, want %d", len(doc.Components), len(want))
	}
	for i, c := range doc.Components {
		if i < len(want) && c.Name != want[i] {
			t.Errorf("component %d is %q, want %q", i, c.Name, want[i])
		}
		if len(c.Sources) != len(c.Keys) && c.Name != "multipliers" {
			t.Errorf("%s: %d sources for keys %v", c.Name, len(c.Sources), c.Keys)
		}
		for _, s := range c.Sources {
			if strings.Contains(s, "no source comment") {
				t.Errorf("%s: %s", c.Name, s)
			}
		}
		if c.MM2 <= 0 {
			t.Errorf("%s: %g mm2", c.Name, c.MM2)
		}
	}
	if doc.TCMM2 <= 0 || doc.SMMM2 <= 4*doc.TCMM2 || doc.GPUMM2 <= 108*doc.SMMM2 {
		t.Errorf("totals tensor core %g, SM %g, GPU %g mm2", doc.TCMM2, doc.SMMM2, doc.GPUMM2)
	}
	table, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "area", "--set", "tensorcore.fp16.b_operand_bytes_per_clk=128"})
	})
	if code != exitOK {
		t.Fatalf("table: exit %d", code)
	}
	for _, w := range append(want, "sources:", "area.multiplier_um2.fp16: Horowitz",
		"against the config without --set: tensor core +") {
		if !strings.Contains(table, w) {
			t.Errorf("table lacks %q:\n%s", w, table)
		}
	}
}

// A bad area key stops the command before anything runs, naming the key.
func TestMicroAreaBadKey(t *testing.T) {
	_, stderr, code := capture(t, func() int {
		return dispatch([]string{"micro", "area", "--set", "area.wire_pitch_um=-1"})
	})
	if code != exitUsage || !strings.Contains(stderr, "area.wire_pitch_um") {
		t.Errorf("exit %d, stderr %q: want %d naming the key", code, stderr, exitUsage)
	}
}

// config show prints area_mm2 and, with --set, its change against the
// config without the overrides.
func TestConfigShowPrintsArea(t *testing.T) {
	out, code := captureStdout(t, func() int {
		return dispatch([]string{"config", "show", "--set", "tensorcore.fp16.selector_fan_in=8"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"# area_mm2", "#   tensor core", "#   GPU ", "% against", "without --set"} {
		if !strings.Contains(out, w) {
			t.Errorf("config show lacks %q", w)
		}
	}
}

// Records carry the config's GPU area and the efficiencies derived from
// it, the record's power and its time; a wider B path raises the area a
// record reports and leaves a dense record's time alone.
func TestRecordsCarryArea(t *testing.T) {
	type rec struct {
		Mode         string  `json:"mode"`
		TFLOPS       float64 `json:"tflops"`
		TimeUS       float64 `json:"time_us"`
		EnergyUJ     float64 `json:"energy_uj"`
		AvgPowerW    float64 `json:"avg_power_w"`
		AreaMM2      float64 `json:"area_mm2"`
		TFLOPSPerMM2 float64 `json:"tflops_per_mm2"`
		TFLOPSPerW   float64 `json:"tflops_per_w"`
		EnergyDelay  float64 `json:"energy_delay"`
	}
	runJSON := func(sets ...string) []rec {
		args := []string{"run", "--gemm", "256x256x256", "--mode", "dense", "--format", "json"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, code := captureStdout(t, func() int { return dispatch(args) })
		if code != exitOK {
			t.Fatalf("%v: exit %d", sets, code)
		}
		var doc struct {
			Results []rec `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Results
	}
	base := runJSON()[0]
	near := func(a, b float64) bool { return a > 0 && b > 0 && (a-b)/b < 1e-9 && (b-a)/b < 1e-9 }
	if !near(base.TFLOPSPerMM2*base.AreaMM2, base.TFLOPS) ||
		!near(base.TFLOPSPerW*base.AvgPowerW, base.TFLOPS) ||
		!near(base.EnergyDelay, base.EnergyUJ*base.TimeUS) {
		t.Errorf("record %+v: efficiencies do not follow tflops, area, power and time", base)
	}
	wide := runJSON("tensorcore.fp16.b_operand_bytes_per_clk=128")[0]
	if wide.AreaMM2 <= base.AreaMM2 || wide.TimeUS != base.TimeUS {
		t.Errorf("b 128: area %g -> %g, time %g -> %g: want a larger area, the same time",
			base.AreaMM2, wide.AreaMM2, base.TimeUS, wide.TimeUS)
	}
}

// A sweep's store holds area_mm2 and tflops_per_mm2 for each point, and
// plot --x area_mm2 --y speedup draws the labelled scatter with its
// Pareto front.
func TestPlotSpeedupAgainstArea(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	dir := t.TempDir()
	spec := writeFile(t, dir, "b.yaml", "workloads: [{name: tiny, gemms: [512x512x512]}]\n"+
		"set: [kernel.simulated_candidates=1, gpu.sm_count=16]\n"+
		// One B path serves every precision: narrow it for all of them.
		"zip:\n  - {tensorcore.fp16.b_operand_bytes_per_clk: [32, 64, 128],\n"+
		"     tensorcore.bf16.b_operand_bytes_per_clk: [32, 64, 128],\n"+
		"     tensorcore.tf32.b_operand_bytes_per_clk: [32, 64, 128],\n"+
		"     tensorcore.int8.b_operand_bytes_per_clk: [32, 64, 128]}\n")
	db := filepath.Join(dir, "s.db")
	svg := filepath.Join(dir, "p.svg")
	for _, args := range [][]string{
		{"sweep", spec, "--db", db, "--quiet", "--jobs", "1"},
		{"results", "export", db, "--format", "json", "--out", filepath.Join(dir, "s.json")},
		{"plot", db, "--x", "area_mm2", "--y", "speedup", "--out", svg},
	} {
		if code := dispatch(args); code != exitOK {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	js, _ := os.ReadFile(filepath.Join(dir, "s.json"))
	if n := strings.Count(string(js), `"area_mm2"`); n < 6 {
		t.Errorf("%d records with area_mm2 in the export, want 6", n)
	}
	if !strings.Contains(string(js), `"tflops_per_mm2"`) {
		t.Error("the export lacks tflops_per_mm2")
	}
	b, _ := os.ReadFile(svg)
	words := svgWords(b)
	for _, w := range []string{"Pareto front", "1: tensorcore.*.b_operand_bytes_per_clk=32",
		"3: tensorcore.*.b_operand_bytes_per_clk=128", "GPU area (mm²)", "points:"} {
		if !strings.Contains(words, w) {
			t.Errorf("scatter lacks %q", w)
		}
	}
}

// svgWords is the text an SVG draws, its text elements joined by spaces
// (the plots draw key lines word by word, report/figure.go's fillWords).
func svgWords(svg []byte) string {
	var words []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllSubmatch(svg, -1) {
		words = append(words, html.UnescapeString(string(m[1])))
	}
	return strings.Join(words, " ")
}
