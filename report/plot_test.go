package report

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/results"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/tensorcore/unit"
)

// sampleReport is a two-workload report with plausible numbers; the plots
// only draw what it holds. STCSIM_KEEP_PLOTS=DIR keeps the files to look
// at.
func sampleReport(layers int) *results.Report {
	rep := &results.Report{Tool: "stcsim", Version: results.Version, Config: "a100-40gb"}
	for _, w := range []string{"resnet50", "bert/large"} {
		var dt, st float64
		for i := 0; i < layers; i++ {
			m, n, k := 256<<(i%4), 1024*(1+i%3), 576*(1+i%5)
			flops := 2 * float64(m*n*k)
			d := results.LayerResult{Workload: w, Layer: fmt.Sprintf("layer%d.conv", i),
				M: m, N: n, K: k, Batch: 1, Precision: tensorcore.FP16, Mode: tensorcore.Dense,
				SparseApplied: false, Count: 1 + i%3, Kernel: "128x128x32_64x64_s5",
				SplitK: 1, Bound: "compute",
				DRAMReadBytes: uint64(2 * (m*k + k*n)), DRAMWriteBytes: uint64(2 * m * n),
				Breakdown: results.Breakdown{Compute: 0.6, Smem: 0.1, L2Latency: 0.1, DRAMBandwidth: 0.1, Launch: 0.1}}
			d.TimeUS = flops / 250e6 * (1 + 0.3*float64(i%2))
			d.TFLOPS = flops / d.TimeUS / 1e6
			s := d
			s.Mode, s.SparseApplied = tensorcore.Sparse, true
			s.TimeUS = d.TimeUS / (1.1 + 0.1*float64(i%6))
			s.TFLOPS = flops / s.TimeUS / 1e6
			s.DRAMReadBytes = uint64(2*(m*k*9/16) + 2*k*n)
			s.Breakdown = results.Breakdown{Compute: 0.4, Smem: 0.15, L2Latency: 0.1, DRAMBandwidth: 0.25, Tail: 0.1}
			s.Speedup = d.TimeUS / s.TimeUS
			rep.Results = append(rep.Results, d, s)
			dt += d.TimeUS * float64(d.Count)
			st += s.TimeUS * float64(s.Count)
		}
		rep.Totals = append(rep.Totals, results.Total{Workload: w, Mode: tensorcore.Dense, TimeUS: dt},
			results.Total{Workload: w, Mode: tensorcore.Sparse, TimeUS: st, Speedup: dt / st})
	}
	return rep
}

func loadDefault(t *testing.T) *configs.Loaded {
	t.Helper()
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ld
}

func plotDir(t *testing.T) string {
	if d := os.Getenv("STCSIM_KEEP_PLOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func TestWritePlots(t *testing.T) {
	ld := loadDefault(t)
	tests := []struct {
		name   string
		layers int
		modes  []tensorcore.Mode
		want   []string
	}{
		{"both modes", 12, tensorcore.Modes, []string{
			"resnet50-speedup", "resnet50-breakdown-dense",
			"resnet50-breakdown-sparse", "resnet50-roofline",
			"bert_large-speedup", "bert_large-roofline"}},
		{"dense only", 3, []tensorcore.Mode{tensorcore.Dense}, []string{
			"resnet50-breakdown-dense", "resnet50-roofline"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := sampleReport(tc.layers)
			if len(tc.modes) == 1 {
				rep = onlyMode(rep, tc.modes[0])
			}
			dir := plotDir(t)
			files, err := WritePlots(dir, rep, ld.Config)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				for _, ext := range []string{".png", ".svg"} {
					if !containsString(files, w+ext) {
						t.Errorf("%s%s not written (have %v)", w, ext, files)
					}
				}
			}
			if len(tc.modes) == 1 && containsString(files, "resnet50-speedup.png") {
				t.Error("speedup plot drawn without sparse results")
			}
			for _, f := range files {
				checkImage(t, filepath.Join(dir, f))
			}
		})
	}
}

func onlyMode(rep *results.Report, mode tensorcore.Mode) *results.Report {
	out := &results.Report{Tool: rep.Tool, Version: rep.Version, Config: rep.Config}
	for _, r := range rep.Results {
		if r.Mode == mode {
			out.Results = append(out.Results, r)
		}
	}
	for _, t := range rep.Totals {
		if t.Mode == mode {
			t.Speedup = 0
			out.Totals = append(out.Totals, t)
		}
	}
	return out
}

func checkImage(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".svg") {
		if !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("%s: not an SVG", path)
		}
		return
	}
	if strings.HasSuffix(path, ".pdf") {
		if !bytes.HasPrefix(data, []byte("%PDF-")) {
			t.Errorf("%s: not a PDF", path)
		}
		return
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
		t.Errorf("%s: %dx%d is too small to read", path, b.Dx(), b.Dy())
	}
}

// TestPeakMatchesMicrobenchmark: the roofline's compute roof is the
// throughput the tensor-core microbenchmark simulates on the same config
// (every tensor core busy with independent MMAs), dense and sparse, and
// the dense roofs are within 1 % of the peaks measured on an A100 (the
// points file's peak-* rows).
func TestPeakMatchesMicrobenchmark(t *testing.T) {
	c := loadDefault(t).Config
	measured := map[tensorcore.Precision]float64{tensorcore.FP16: 311.2,
		tensorcore.INT8: 620.11, tensorcore.TF32: 155.55}
	for _, prec := range []tensorcore.Precision{tensorcore.FP16, tensorcore.TF32, tensorcore.INT8} {
		for _, sparse := range []bool{false, true} {
			roof, err := Peak(c, prec, sparse)
			if err != nil {
				t.Fatal(err)
			}
			mode := tensorcore.Dense
			if sparse {
				mode = tensorcore.Sparse
			}
			r, err := unit.MicroTC(c.TensorCore, c.GPU.SMCount,
				c.SM.SubPartitions, c.GPU.ClockMHz, prec, mode)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(roof/r.TFLOPS-1) > 0.01 {
				t.Errorf("%s sparse=%v: roof %.1f, microbenchmark %.1f", prec,
					sparse, roof, r.TFLOPS)
			}
			if m := measured[prec]; !sparse && math.Abs(roof/m-1) > 0.01 {
				t.Errorf("%s: roof %.1f, measured %.1f", prec, roof, m)
			}
		}
	}
	if _, err := Peak(c, tensorcore.Precision(9), false); err == nil {
		t.Error("fp8 accepted")
	}
}

func TestIntensity(t *testing.T) {
	r := results.LayerResult{M: 1024, N: 1024, K: 1024, Batch: 2,
		DRAMReadBytes: 4 << 20, DRAMWriteBytes: 2 << 20}
	want := 2.0 * 1024 * 1024 * 1024 * 2 / (6 << 20)
	if got := Intensity(r); math.Abs(got-want) > 1e-9 {
		t.Errorf("intensity %g, want %g", got, want)
	}
	if Intensity(results.LayerResult{M: 1, N: 1, K: 1}) != 0 {
		t.Error("no DRAM bytes should give 0")
	}
}

func TestLinePlot(t *testing.T) {
	dir := plotDir(t)
	series := []results.Series{
		{Label: "resnet50", X: []string{"64", "128", "256"}, Y: []float64{1.2, 1.4, 1.5}},
		{Label: "bert-large", X: []string{"64", "128", "256"}, Y: []float64{1.3, 1.5, 1.6}},
	}
	tests := []struct {
		file    string
		series  []results.Series
		wantErr string
	}{
		{"numeric.png", series, ""},
		{"numeric.svg", series, ""},
		{"nominal.png", []results.Series{{Label: "a", X: []string{"2:4", "1:2"},
			Y: []float64{1.5, 1.8}}}, ""},
		{"numeric.pdf", series, ""},
		{"bad.jpg", series, "want a .png, .svg or .pdf"},
	}
	for _, tc := range tests {
		err := LinePlot(filepath.Join(dir, tc.file), LineOptions{Title: "title",
			XLabel: "x (unit)", YLabel: "y (unit)"}, tc.series)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.file, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		checkImage(t, filepath.Join(dir, tc.file))
	}
}

func TestMarkdown(t *testing.T) {
	ld := loadDefault(t)
	rep := sampleReport(3)
	plots := []string{"resnet50-speedup.png", "resnet50-speedup.svg",
		"bert_large-roofline.png", "resnet50-energy-breakdown.png", "resnet50-energy-layers.png"}
	md := string(Markdown(rep, ld, plots))
	for _, want := range []string{
		"# stcsim report", "config `a100-40gb`",
		"fp16 312 dense / 624 sparse TFLOPS",
		"| workload | dense time (µs) | sparse time (µs) | speedup |",
		"## resnet50", "## bert/large",
		"| 1 | layer0.conv | 256x1024x576 | 1 |",
		"![resnet50 speedup](resnet50-speedup.png) ([SVG](resnet50-speedup.svg))",
		"![bert/large roofline](bert_large-roofline.png)\n",
		// power.md says report.md has the energy plots.
		"![resnet50 energy breakdown](resnet50-energy-breakdown.png)",
		"![resnet50 energy layers](resnet50-energy-layers.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "resnet50-speedup.png") != 1 {
		t.Error("plot embedded under the wrong workload")
	}
}

// The roofline names its points: every layer's number and name is in the
// key beside the plot, and the breakdown plots of both modes share one
// time scale.
func TestRooflineKeyAndSharedBreakdownScale(t *testing.T) {
	ld := loadDefault(t)
	rows := resultsOf(sampleReport(5), "resnet50")
	fig, err := rooflinePlot("resnet50", rows, ld.Config)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Join(fig.key, "\n")
	for i := 0; i < 5; i++ {
		if want := fmt.Sprintf("%2d  layer%d.conv", i+1, i); !strings.Contains(key, want) {
			t.Errorf("roofline key lacks %q:\n%s", want, key)
		}
	}
	top := breakdownTop(rows)
	d, _ := breakdownPlot("resnet50", rows, tensorcore.Dense, top)
	s, _ := breakdownPlot("resnet50", rows, tensorcore.Sparse, top)
	if d.p.Y.Max != s.p.Y.Max || d.p.Y.Max < top {
		t.Errorf("breakdown scales: dense up to %g, sparse up to %g, tallest bar %g",
			d.p.Y.Max, s.p.Y.Max, top)
	}
}

// A sweep plot fits its Y range to the data (a 1.2-1.6 speedup is not
// drawn from 0) and draws at most maxLines lines, saying how many of
// how many, so that --by layer stays readable.
func TestLinePlotFitsAndCutsLines(t *testing.T) {
	series := []results.Series{{Label: "a", X: []string{"1", "2"}, Y: []float64{1.2, 1.6}}}
	lo, hi := fittedRange(series)
	if lo <= 1.0 || lo >= 1.2 || hi <= 1.6 || hi >= 1.8 {
		t.Errorf("range %g..%g for data 1.2..1.6", lo, hi)
	}
	var many []results.Series
	for i := 0; i < 30; i++ {
		many = append(many, results.Series{Label: fmt.Sprintf("layer%d", i),
			X: []string{"1", "2"}, Y: []float64{float64(i), float64(i) + 1}})
	}
	kept, key := topSeries(many)
	if len(kept) != maxLines || kept[0].Label != "layer29" ||
		!strings.Contains(strings.Join(key, " "), fmt.Sprintf("%d of 30 lines", maxLines)) {
		t.Errorf("kept %d lines starting %s, key %q", len(kept), kept[0].Label, key)
	}
	dir := plotDir(t)
	if err := LinePlot(filepath.Join(dir, "by-layer.png"), LineOptions{Title: "sparse speedup over dense (x) " +
		"against l2.size_kb (KB), one line per layer", XLabel: "l2.size_kb (KB)",
		YLabel: "sparse speedup over dense (x)"}, many); err != nil {
		t.Fatal(err)
	}
	checkImage(t, filepath.Join(dir, "by-layer.png"))
}

// A paper-ready sweep plot: the title wraps instead of running off the
// left edge or into the legend; the reference line (1x) and the default
// configuration's point are drawn and named in the legend; the caption
// says what produced the plot; sizes and type follow the options. The
// SVG's text elements are the test's witness (gonum writes each string
// as a <text> element).
func TestLinePlotForPapers(t *testing.T) {
	dir := plotDir(t)
	series := []results.Series{
		{Label: "bert-base-512 768x512x768", X: []string{"400", "1000", "2039"}, Y: []float64{1.05, 1.2, 1.3}},
		{Label: "bert-base-512 3072x512x768", X: []string{"400", "1000", "2039"}, Y: []float64{1.1, 1.35, 1.45}},
	}
	long := "sparse speedup over dense against DRAM bandwidth, one line per layer, " +
		"for gpu.sm_count=108 and shared_memory.bytes_per_clk=128 on the A100-40GB"
	o := LineOptions{Title: long, XLabel: "DRAM bandwidth (GB/s)", YLabel: "speedup (x)",
		RefY: 1, RefLabel: "1x: no gain", BaselineX: "1555", BaselineLabel: "a100-40gb default",
		Caption: []string{"config a100-40gb; set on every point: kernel.simulated_candidates=1",
			"store example.db (sha256 0123abcd); stcsim 0.1.0"},
		WidthIn: 6, HeightIn: 4, FontSize: 11}
	svg := filepath.Join(dir, "paper.svg")
	if err := LinePlot(svg, o, series); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(svg)
	text := string(data)
	for _, want := range []string{">1x: no gain<", ">a100-40gb default<",
		"kernel.simulated_candidates=1", ">store<", ">example.db<", ">DRAM bandwidth (GB/s)<"} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(text, ">"+long+"<") {
		t.Error("the long title is drawn on one line")
	}
	for _, f := range []string{"paper.png", "paper.pdf"} {
		if err := LinePlot(filepath.Join(dir, f), o, series); err != nil {
			t.Fatal(err)
		}
		checkImage(t, filepath.Join(dir, f))
	}
	small := o
	small.WidthIn, small.HeightIn = 3, 2
	a, b := filepath.Join(dir, "big.png"), filepath.Join(dir, "small.png")
	if err := LinePlot(a, o, series); err != nil {
		t.Fatal(err)
	}
	if err := LinePlot(b, small, series); err != nil {
		t.Fatal(err)
	}
	if wa, wb := pngWidth(t, a), pngWidth(t, b); wb >= wa {
		t.Errorf("--size 3x2 gives %d px, 6x4 gives %d px", wb, wa)
	}
}

func pngWidth(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img.Bounds().Dx()
}

// A figure or report with fast-tier records says so: "(fast tier)" in
// every figure's title, no time-breakdown figure (the tier makes none),
// a line in report.md and in the table's legend; one without says nothing.
func TestFastTierIsLabelled(t *testing.T) {
	ld := loadDefault(t)
	for _, fastRun := range []bool{true, false} {
		rep := sampleReport(3)
		if fastRun {
			for i := range rep.Results {
				rep.Results[i].Fidelity, rep.Results[i].Breakdown = configs.FidelityFast, results.Breakdown{}
			}
		}
		dir := t.TempDir()
		files, err := WritePlots(dir, rep, ld.Config)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f, ".svg") {
				continue
			}
			svg, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(svg), "fast tier)"); got != fastRun {
				t.Errorf("fast records %v: %s says fast tier: %v", fastRun, f, got)
			}
			if fastRun && strings.Contains(f, "-breakdown-") {
				t.Errorf("%s: a time breakdown of fast-tier records", f)
			}
		}
		var table bytes.Buffer
		Table(&table, rep)
		md := string(Markdown(rep, ld, files))
		if got := strings.Contains(md, "**Fast tier:**") && strings.Contains(table.String(), "timed by the fast tier"); got != fastRun {
			t.Errorf("fast records %v: report.md and table say fast tier: %v", fastRun, got)
		}
	}
}

// report.md's layer table gives each layer's fixed share (launch,
// prologue, epilogue) dense / sparse, so that a short-K layer's smaller
// gain shows where it comes from; a record without phases (the fast
// tier) shows "-".
func TestMarkdownFixedShare(t *testing.T) {
	rep := sampleReport(2)
	d, s := &rep.Results[0], &rep.Results[1]
	d.Phases = results.Phases{Launch: 0.02, Prologue: 0.03, Mainloop: 0.85, Epilogue: 0.04, LastWave: 0.06}
	s.Phases = results.Phases{Launch: 0.04, Prologue: 0.07, Mainloop: 0.7, Epilogue: 0.1, LastWave: 0.09}
	md := string(Markdown(rep, loadDefault(t), nil))
	if !strings.Contains(md, "| fixed | why not 2x |") {
		t.Fatalf("no fixed column:\n%s", md)
	}
	var row0, row1 string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| 1 | layer0.conv") && row0 == "" {
			row0 = l
		}
		if strings.HasPrefix(l, "| 2 | layer1.conv") && row1 == "" {
			row1 = l
		}
	}
	if !strings.Contains(row0, "| 9% / 21% |") {
		t.Errorf("layer0: want fixed 9%% / 21%%: %q", row0)
	}
	if !strings.Contains(row1, "| - / - |") {
		t.Errorf("layer1 has no phases: want - / -: %q", row1)
	}
}

// The energy breakdown's bars fill their frame (the legend is in the
// side panel), rather than a third of it: the columns the bars' colours
// cover span most of the image.
func TestEnergyBreakdownFillsItsFrame(t *testing.T) {
	rep := sampleReport(3)
	for i := range rep.Totals {
		rep.Totals[i].Energy = energy.Breakdown{MMA: 800, DRAM: 200, Board: 100}
	}
	fig, err := asFigure(energyBreakdownPlot("resnet50", rep))
	if err != nil || fig == nil {
		t.Fatalf("no figure: %v", err)
	}
	data, err := fig.render("png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	mma := energyColors[0].(color.RGBA)
	b := img.Bounds()
	first, last := -1, -1
	for x := b.Min.X; x < b.Max.X; x++ {
		// The bars' bottoms, below the legend's swatches.
		for y := b.Min.Y + b.Dy()/2; y < b.Min.Y+b.Dy()*17/20; y++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == mma.R && uint8(g>>8) == mma.G && uint8(bl>>8) == mma.B {
				if first < 0 {
					first = x
				}
				last = x
				break
			}
		}
	}
	if span := float64(last-first) / float64(b.Dx()); first < 0 || span < 0.45 {
		t.Errorf("the bars span %.2f of the %d-pixel image, want >= 0.45", span, b.Dx())
	} else {
		t.Logf("the bars span %.2f of the %d-pixel image", span, b.Dx())
	}
	checkImage(t, writeTemp(t, "energy.png", data))
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Axis labels say the records' precision, so a figure taken out of its
// report still says what it measured.
func TestWithPrecision(t *testing.T) {
	rows := resultsOf(sampleReport(2), "resnet50")
	if got := WithPrecision("speedup (x)", rows); got != "speedup (x), fp16" {
		t.Errorf("WithPrecision = %q", got)
	}
	rows[1].Precision = tensorcore.INT8
	if got := WithPrecision("x", rows); got != "x, fp16/int8" {
		t.Errorf("two precisions: %q", got)
	}
	if got := WithPrecision("x", nil); got != "x" {
		t.Errorf("no rows: %q", got)
	}
}

// A sweep's refined points (re-run at instruction level beside the fast
// tier's lines) are drawn in their own marker; the fast lines are not.
func TestRefinedSeries(t *testing.T) {
	if !refined(results.Series{Label: "tiny, sim.fidelity=instruction"}) {
		t.Error("a refined series is not marked")
	}
	if refined(results.Series{Label: "tiny, sim.fidelity=fast"}) || refined(results.Series{Label: "tiny"}) {
		t.Error("a fast or unlabelled series is marked as refined")
	}
}
