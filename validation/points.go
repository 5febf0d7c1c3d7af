package validation

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Point is one measurement row.
type Point struct {
	Line      int
	ID        string
	Hardware  string
	Precision tensorcore.Precision // fp16 when the column is empty
	Kind      string               // peak, latency, bandwidth, launch, mma, gemm
	M, N, K   int
	Dense     float64 // measured value (peak/latency/bandwidth) or dense time/throughput
	Sparse    float64 // gemm: sparse time/throughput (0 when absent)
	Unit      string
	Speedup   float64
	Source    string
	// Kernels pins the kernel that ran per mode ("dense", "sparse"): a
	// library tile name, optionally with _splitkN (column kernel, as
	// dense=NAME;sparse=NAME). Empty: the measurement does not say.
	Kernels map[tensorcore.Mode]string
	// Clock is the clock column as written: one condition for the row,
	// or one per mode (dense=C;sparse=C). A condition is "locked:MHZ"
	// (clocks locked with nvidia-smi -lgc), "boost" (not locked: the
	// card's own boost under its power limit), or "" (not stated).
	Clock string
	// Clocks is Clock per mode (both modes the same unless the column
	// names them apart).
	Clocks map[tensorcore.Mode]string
	// Harness is the harness column as written: how the time was taken
	// (Harnesses), for the row or per mode (dense=H;sparse=H).
	Harness string
	// Harnesses is Harness per mode.
	Harnesses map[tensorcore.Mode]string
	// Layout is the layout column as written: A's, B's and C's layouts
	// in CUTLASS profiler naming (n column-major, t row-major: "nnn" for
	// --A=f16:column --B=f16:column --C=f32:column); empty when the
	// source does not say (the row then runs tn). See Row.
	Layout string
	// Pattern is the pattern column: the sparse operand's pattern as
	// tensorcore.sparse_pattern spells it (2:4, N:M, V:N:M for a
	// vector-wise kernel such as VENOM's Spatha); empty: the hardware's
	// pattern of the row's precision, which the config's key then sets.
	Pattern string
}

// Harnesses are the values of the harness column: how a time was taken.
// Only microbenchmark makes a row controlled by itself; the others say
// what the time includes (docs/validation.md#conditions).
var HarnessNames = []string{
	"cutlass_profiler",  // CUTLASS profiler: device time of the kernel, averaged over back-to-back launches
	"torch",             // PyTorch (torch.utils.benchmark or CUDA events) around asynchronous calls: per call, the device time unless the host issues slower
	"torch_sync",        // PyTorch timing that includes per-call host time (a synchronisation per call)
	"cusparselt_sample", // cuSPARSELt's matmul example: device time of the chosen algorithm
	"torch_cusparselt",  // as torch, through PyTorch's cuSPARSELt linear of 2023 (PR 97546), which hands the library a C of the output's shape
	"ncu",               // Nsight Compute's kernel duration: one launch, replayed with the caches flushed (its default --cache-control all), the launch gap not in it
	"venom_cublas",      // VENOM's benchmark_spmm (SC'23 artefact): cublasGemmEx in a CUDA-event loop, 10 warm-up and 100 timed calls back to back
	"venom_cusparselt",  // the same loop around cusparseLtMatmul, handed a C of the output's shape with beta 0
	"venom_spatha",      // the same loop around Spatha's V:N:M SpMM (one more warm-up call before it), no C read (beta 0, C nullptr)
	"microbenchmark",    // a microbenchmark of one mechanism (peak, latency, bandwidth, launch, one instruction)
}

var columns = []string{"id", "hardware", "precision", "kind", "m", "n",
	"k", "dense", "sparse", "unit", "speedup", "source"}

// optionalColumns may follow the required ones, in this order.
var optionalColumns = []string{"kernel", "clock", "harness", "layout", "pattern"}

// MaxPointsBytes bounds a points file: the shared collection is a few KB
// (about 200 bytes a row), so 16 MiB holds some 80000 measurements; the
// bound keeps a device (/dev/zero) or a huge file named by mistake from
// being read without end.
const MaxPointsBytes = 16 << 20

// speedupTolerance is how far a row's speedup may stray from the ratio
// of its own dense and sparse values (their rounding) before the row is
// refused as contradicting itself.
const speedupTolerance = 0.01

// LoadPoints reads a points file; errors name the file, line and column.
func LoadPoints(path string) ([]Point, error) {
	data, err := configs.ReadRegular(path, MaxPointsBytes, "a points file")
	if err != nil {
		return nil, fmt.Errorf("points file %s: %w", path, err)
	}
	return ParsePoints(bytes.NewReader(data), path)
}

// ParsePoints parses a points CSV with the header of a100-public.csv.
func ParsePoints(r io.Reader, name string) ([]Point, error) {
	br := bufio.NewReader(r)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		br.Discard(3) // a UTF-8 byte-order mark, as trace CSVs accept
	}
	cr := csv.NewReader(br)
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:1: empty file: want the header %s", name,
			strings.Join(append(append([]string{}, columns...),
				optionalColumns...), ","))
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	if err := checkHeader(header); err != nil {
		return nil, fmt.Errorf("%s:1: %v", name, err)
	}
	var pts []Point
	ids := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if len(pts) == 0 {
				return nil, fmt.Errorf("%s:1: no rows after the header: nothing to validate", name)
			}
			return pts, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		rec = append(rec, make([]string, len(columns)+len(optionalColumns)-len(rec))...)
		p, err := parsePoint(rec, line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if first, dup := ids[p.ID]; dup {
			return nil, fmt.Errorf("%s:%d: column id: %s already used at "+
				"line %d", name, line, configs.Quote(p.ID), first)
		}
		ids[p.ID] = line
		pts = append(pts, p)
	}
}

// csvError positions an encoding/csv error as FILE:LINE:COL: ...
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: %v", name, pe.Line, max(pe.Column, 1),
			pe.Err)
	}
	return fmt.Errorf("%s: %v", name, err)
}

// checkHeader accepts the required columns followed by a prefix of the
// optional ones.
func checkHeader(header []string) error {
	all := append(append([]string{}, columns...), optionalColumns...)
	if len(header) < len(columns) || len(header) > len(all) {
		return fmt.Errorf("%d columns, want %d to %d (header: %s)",
			len(header), len(columns), len(all), strings.Join(all, ","))
	}
	for i, c := range header {
		if strings.TrimSpace(c) != all[i] {
			return fmt.Errorf("column %d is %s, want %q (header: %s)",
				i+1, quote.Q(c), all[i], strings.Join(all, ","))
		}
	}
	return nil
}

// maxIDBytes bounds a row id (the shared collection's longest is 27).
const maxIDBytes = 64

func parsePoint(rec []string, line int) (Point, error) {
	p := Point{Line: line, ID: rec[0], Hardware: rec[1],
		Kind: rec[3], Unit: rec[9], Source: rec[11],
		Clock: strings.TrimSpace(rec[13]), Harness: strings.TrimSpace(rec[14]),
		Layout: strings.TrimSpace(rec[15]), Pattern: strings.TrimSpace(rec[16])}
	if p.ID == "" {
		return p, fmt.Errorf("column id: empty")
	}
	if len(p.ID) > maxIDBytes || quote.HasControl(p.ID) {
		// an id is printed in every table and note of the report
		return p, fmt.Errorf("column id: %s: want at most %d bytes of printable text",
			configs.Quote(p.ID), maxIDBytes)
	}
	if err := parseOpt(rec[2], columns[2], func(s string) error {
		var err error
		p.Precision, err = tensorcore.ParsePrecision(s)
		return err
	}); err != nil {
		return p, err
	}
	kernels, err := parseKernels(rec[12])
	if err != nil {
		return p, err
	}
	p.Kernels = kernels
	if p.Clocks, err = parseClocks(p.Clock); err != nil {
		return p, err
	}
	if p.Harnesses, err = perMode("harness", p.Harness, checkHarness); err != nil {
		return p, err
	}
	ints := []*int{&p.M, &p.N, &p.K}
	for i, dst := range ints {
		if err := parseOpt(rec[4+i], columns[4+i], func(s string) error {
			v, err := strconv.Atoi(s)
			if err != nil {
				err = fmt.Errorf("want a whole number")
			} else if v <= 0 || v > workloads.MaxDim {
				err = fmt.Errorf("must be in 1..%d", workloads.MaxDim)
			}
			*dst = v
			return err
		}); err != nil {
			return p, err
		}
	}
	floats := []struct {
		col int
		dst *float64
	}{{7, &p.Dense}, {8, &p.Sparse}, {10, &p.Speedup}}
	for _, f := range floats {
		dst := f.dst
		if err := parseOpt(rec[f.col], columns[f.col], func(s string) error {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				err = fmt.Errorf("want a finite number > 0")
			}
			*dst = v
			return err
		}); err != nil {
			return p, err
		}
	}
	return p, p.check()
}

func parseOpt(s, col string, parse func(string) error) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if err := parse(s); err != nil {
		return fmt.Errorf("column %s: %s: %v", col, configs.Quote(s), err)
	}
	return nil
}

// check rejects rows whose kind lacks the fields it needs.
func (p Point) check() error {
	if p.Kind == "mma" {
		if p.Dense == 0 && p.Sparse == 0 {
			return fmt.Errorf("columns dense, sparse: an mma row needs one")
		}
	} else if p.Dense == 0 {
		return fmt.Errorf("column dense: required")
	}
	if p.Kind == "gemm" && (p.M == 0 || p.N == 0 || p.K == 0) {
		return fmt.Errorf("gemm row needs m, n and k")
	}
	if p.Kind == "launch" && (p.N <= 0 || p.N%2 != 0) {
		return fmt.Errorf("column n: a launch row needs the kernel's element count, a positive even number (got %d)", p.N)
	}
	if p.Kind == "launch" && (p.M < 32 || p.M > 1024 || p.M%32 != 0) {
		return fmt.Errorf("column m: a launch row needs the threads per CTA, a multiple of 32 in 32..1024 (got %d)", p.M)
	}
	if err := p.checkStreamShape(); err != nil {
		return err
	}
	if err := p.checkLayout(); err != nil {
		return err
	}
	if err := p.checkPattern(); err != nil {
		return err
	}
	units, ok := kindUnits[p.Kind]
	if !ok {
		return fmt.Errorf("column kind: %s is not peak, latency, bandwidth, "+
			"launch, mma or gemm", quote.Q(p.Kind))
	}
	if !slices.Contains(units, p.Unit) {
		return fmt.Errorf("column unit: %s rows need %s (got %s)", p.Kind,
			strings.Join(units, " or "), quote.Q(p.Unit))
	}
	for _, v := range []struct {
		col string
		x   float64
	}{{"dense", p.Dense}, {"sparse", p.Sparse}} {
		b := unitBounds[p.Unit]
		if v.x != 0 && (v.x < b[0] || v.x > b[1]) {
			return fmt.Errorf("column %s: %g %s is outside %g..%g, beyond any "+
				"measurement of a GPU (a typo or a unit mix-up?)", v.col, v.x, p.Unit, b[0], b[1])
		}
	}
	if p.Speedup != 0 && (p.Speedup < 0.01 || p.Speedup > 100) {
		return fmt.Errorf("column speedup: %g is outside 0.01..100", p.Speedup)
	}
	if p.Kind == "gemm" && p.Speedup > 0 && p.Sparse > 0 {
		// speedup = dense time / sparse time (points/README.md): the
		// ratio of throughputs the other way round.
		ratio := p.Dense / p.Sparse
		if p.Unit == "TFLOPS" {
			ratio = p.Sparse / p.Dense
		}
		if math.Abs(p.Speedup/ratio-1) > speedupTolerance {
			return fmt.Errorf("column speedup: %g contradicts the row's "+
				"dense %g and sparse %g %s (speedup = dense time / sparse "+
				"time = %.4g); fix one, or leave speedup empty to compute "+
				"it", p.Speedup, p.Dense, p.Sparse, p.Unit, ratio)
		}
	}
	if p.Kind == "gemm" {
		g := p.Row()
		g.Sparsity, g.SparseOperand = workloads.Dense, ""
		if err := g.Validate(); err != nil {
			return fmt.Errorf("gemm row: %v", err)
		}
	}
	return nil
}

// unitBounds are the physical range of a measured value in each unit:
// generous (a 10 PFLOPS chip, a 1 ns kernel, a 10 s cycle count), so that
// only a value no GPU measurement gives (1e308 TFLOPS, 1e-320 us) is
// refused before it can turn an error into Inf or NaN.
var unitBounds = map[string][2]float64{
	"TFLOPS":     {1e-6, 1e4},
	"TOPS":       {1e-6, 1e4},
	"us":         {1e-3, 1e10},
	"ms":         {1e-6, 1e7},
	"cycles":     {1, 1e10},
	"GB/s":       {1e-3, 1e6},
	"FMA/clk/SM": {1e-3, 1e6},
}

// kindUnits are the units each kind of row may be measured in.
var kindUnits = map[string][]string{
	"peak":      {"TFLOPS", "TOPS"},
	"latency":   {"cycles"},
	"bandwidth": {"GB/s"},
	"gemm":      {"us", "ms", "TFLOPS"},
	"mma":       {"FMA/clk/SM"},
	"launch":    {"us"},
}

// ConfigFor is the built-in config matching a row's hardware.
func ConfigFor(hardware string) (string, bool) {
	h := strings.ToUpper(hardware)
	switch {
	case strings.HasPrefix(h, "A100-80GB"), strings.HasPrefix(h, "A100-SXM4-80GB"):
		return "a100-80gb", true
	case strings.HasPrefix(h, "A100-PCIE-40GB"):
		return "a100-pcie-40gb", true // the SXM4-40GB's GA100 on a 250 W board
	case strings.HasPrefix(h, "A100-PCIE-80GB"):
		return "a100-pcie-80gb", true // the SXM4-80GB's GA100 and HBM2e (1512 MHz) on a 300 W board
	case strings.HasPrefix(h, "A100"):
		return "a100-40gb", true
	case strings.Contains(h, "3090"):
		return "rtx3090", true // GeForce RTX 3090 (GA102)
	case strings.Contains(h, "A6000"):
		return "rtx-a6000", true // RTX A6000 (GA102)
	case strings.HasPrefix(h, "A40"):
		return "a40", true // A40 (GA102): the RRZE gpu-benches board
	case strings.HasPrefix(h, "H100"):
		return "h100-sxm", true
	case strings.HasPrefix(h, "H200"):
		return "h200", true
	}
	return "", false
}

// checkStreamShape checks the m, n and k of a bandwidth row: only the
// gpu-l2-stream rows (bw-l2-stream-read*, bw-l2-stream-store*) have them,
// all three or none: m the threads per CTA (a multiple of 32 in
// 32..1024), k the CTAs per SM (m x k at most 2048, an SM's threads), n
// the buffer's length in doubles (at least 32, one warp's). Without them
// the row runs the kernel's shape of bw-l2-stream-store (640 x 2, a 4 MB
// buffer).
func (p Point) checkStreamShape() error {
	if p.Kind == "latency" {
		return p.checkChaseFootprint()
	}
	if p.Kind != "bandwidth" || (p.M == 0 && p.N == 0 && p.K == 0) {
		return nil
	}
	if l, _ := p.level(); l != "l2_stream_read" && l != "l2_stream_store" {
		return fmt.Errorf("columns m, n, k: only gpu-l2-stream rows (bw-l2-stream-*) " +
			"have a shape; leave them empty")
	}
	switch {
	case p.M == 0 || p.N == 0 || p.K == 0:
		return fmt.Errorf("columns m, n, k: a gpu-l2-stream row gives all three " +
			"(threads per CTA, buffer length in doubles, CTAs per SM) or none")
	case p.M < 32 || p.M > 1024 || p.M%32 != 0:
		return fmt.Errorf("column m: the threads per CTA, a multiple of 32 in 32..1024 (got %d)", p.M)
	case p.M*p.K > 2048:
		return fmt.Errorf("column k: %d CTAs of %d threads exceed an SM's 2048 threads", p.K, p.M)
	case p.N < 32:
		return fmt.Errorf("column n: the buffer's length in doubles, at least 32 (got %d)", p.N)
	}
	return nil
}

// checkChaseFootprint checks a latency row's m, n and k: a lat-l2-all
// row (RRZE gpu-latency's chase over every line, whatever its home) needs
// n, the footprint in KiB (the file's data-set column); m and k stay
// empty, and the other latency rows have none.
func (p Point) checkChaseFootprint() error {
	l, _ := p.level()
	switch {
	case l != "l2_all" && (p.M != 0 || p.N != 0 || p.K != 0):
		return fmt.Errorf("columns m, n, k: only a lat-l2-all row has a footprint; leave them empty")
	case l == "l2_all" && (p.N == 0 || p.M != 0 || p.K != 0):
		return fmt.Errorf("column n: a lat-l2-all row needs its footprint in KiB there, and m and k empty")
	}
	return nil
}

// level is the memory level a latency or bandwidth row measures, from its
// id: lat-l1, lat-l2-near, lat-l2-far, lat-dram, bw-l1,
// lat-l2-all* (a chase over every line of the row's footprint),
// bw-l2-stream-read*, bw-l2-stream-store* (gpu-l2-stream's kernels),
// bw-l2, bw-dram-write*, bw-dram-copy*, bw-dram* (reads).
func (p Point) level() (string, bool) {
	id := strings.TrimPrefix(strings.TrimPrefix(p.ID, "lat-"), "bw-")
	for _, l := range []string{"l2-near", "l2-far", "l1", "l2-stream-read",
		"l2-stream-store", "l2-all", "l2", "dram-write", "dram-copy", "dram"} {
		if strings.HasPrefix(id, l) {
			return strings.ReplaceAll(l, "-", "_"), true
		}
	}
	return "", false
}

// parseKernels reads the kernel column: mode=NAME pairs separated by ';'.
func parseKernels(s string) (map[tensorcore.Mode]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	out := map[tensorcore.Mode]string{}
	for _, part := range strings.Split(s, ";") {
		m, name, ok := strings.Cut(strings.TrimSpace(part), "=")
		mode, err := tensorcore.ParseMode(m)
		if !ok || err != nil || name == "" {
			return nil, fmt.Errorf("column kernel: %s: want dense=NAME;sparse=NAME "+
				"(a library tile name such as 256x128x32_64x64_s3, optionally "+
				"with _splitkN)", quote.Q(part))
		}
		out[mode] = name
	}
	return out, nil
}

// parseClocks reads the clock column: one condition, or
// dense=C;sparse=C.
func parseClocks(s string) (map[tensorcore.Mode]string, error) {
	return perMode("clock", s, func(c string) error {
		_, err := lockedMHz(c)
		return err
	})
}

func checkHarness(h string) error {
	if h != "" && !slices.Contains(HarnessNames, h) {
		return fmt.Errorf("column harness: %s: want one of %s or empty",
			configs.Quote(h), strings.Join(HarnessNames, ", "))
	}
	return nil
}

// perMode reads a column that holds one value for the row or one per
// mode (dense=V;sparse=V; a mode left out is "").
func perMode(col, s string, check func(string) error) (map[tensorcore.Mode]string, error) {
	out := map[tensorcore.Mode]string{}
	if !strings.Contains(s, "=") {
		if err := check(s); err != nil {
			return nil, err
		}
		for _, m := range tensorcore.Modes {
			out[m] = s
		}
		return out, nil
	}
	for _, part := range strings.Split(s, ";") {
		m, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		mode, err := tensorcore.ParseMode(m)
		if err != nil {
			return nil, fmt.Errorf("column %s: %s: want a value or "+
				"dense=V;sparse=V", col, configs.Quote(part))
		}
		if _, dup := out[mode]; dup {
			return nil, fmt.Errorf("column %s: %s names %s twice", col, configs.Quote(s), mode)
		}
		v = strings.TrimSpace(v)
		if err := check(v); err != nil {
			return nil, err
		}
		out[mode] = v
	}
	for _, m := range tensorcore.Modes {
		if _, ok := out[m]; !ok {
			out[m] = ""
		}
	}
	return out, nil
}

// LockedMHz is the locked clock of the measurement in mode m (0 when the
// clocks were not locked or the row does not say).
func (p Point) LockedMHz(m tensorcore.Mode) int {
	v, _ := lockedMHz(p.Clocks[m])
	return v
}

// ClockOf is the clock condition of mode m ("locked:MHZ", "boost", "").
func (p Point) ClockOf(m tensorcore.Mode) string { return p.Clocks[m] }

// Controlled reports whether mode m of the row was measured under
// controlled conditions: a microbenchmark, or clocks locked and the
// kernel named (in the kernel column, or the CUTLASS profiler's best
// kernel of a named family at a locked clock). Only controlled rows may
// calibrate (docs/calibration.md).
func (p Point) Controlled(m tensorcore.Mode) bool {
	h := p.HarnessOf(m)
	if h == "microbenchmark" {
		return true
	}
	if p.LockedMHz(m) == 0 {
		return false
	}
	_, named := p.Kernels[m]
	return named || h == "cutlass_profiler"
}

// HarnessOf is how mode m's time was taken ("" when not stated).
func (p Point) HarnessOf(m tensorcore.Mode) string { return p.Harnesses[m] }

func lockedMHz(c string) (int, error) {
	switch {
	case c == "", c == "boost":
		return 0, nil
	case strings.HasPrefix(c, "locked:"):
		v, err := strconv.Atoi(strings.TrimPrefix(c, "locked:"))
		if err != nil || v <= 0 || v > 10000 {
			return 0, fmt.Errorf("column clock: %s: want locked:MHZ with MHZ in 1..10000", configs.Quote(c))
		}
		return v, nil
	}
	return 0, fmt.Errorf("column clock: %s: want locked:MHZ, boost or empty (or dense=C;sparse=C)", configs.Quote(c))
}

// pinnedPlan splits a pinned kernel name into the tile name and split-K.
func pinnedPlan(name string) (tile string, splitK int) {
	if i := strings.Index(name, "_splitk"); i >= 0 {
		if v, err := strconv.Atoi(name[i+len("_splitk"):]); err == nil && v > 1 {
			return name[:i], v
		}
	}
	return name, 1
}

// checkLayout: the layout column is empty or three letters n/t (A, B, C)
// on a gemm row.
func (p Point) checkLayout() error {
	if p.Layout == "" {
		return nil
	}
	if p.Kind != "gemm" {
		return fmt.Errorf("column layout: %s on a %s row (only gemm rows have operands)", quote.Q(p.Layout), p.Kind)
	}
	if len(p.Layout) != 3 || strings.Trim(p.Layout, "nt") != "" {
		return fmt.Errorf("column layout: %s: want three letters n or t (A's, B's "+
			"and C's layout in CUTLASS profiler naming, e.g. nnn for --A=f16:column "+
			"--B=f16:column --C=f32:column)", quote.Q(p.Layout))
	}
	return nil
}

// checkPattern: the pattern column is empty, or a pattern
// tensorcore.ParsePattern accepts on a gemm row with a sparse value.
func (p Point) checkPattern() error {
	if p.Pattern == "" {
		return nil
	}
	if p.Kind != "gemm" || p.Sparse == 0 {
		return fmt.Errorf("column pattern: %s on a row without a sparse gemm value "+
			"(only a sparse gemm time has a pattern)", quote.Q(p.Pattern))
	}
	if _, err := tensorcore.ParsePattern(p.Pattern); err != nil {
		return fmt.Errorf("column pattern: %v", err)
	}
	return nil
}

// Row is the trace row a gemm point runs as. stcsim writes D row-major,
// so a measurement with a column-major C (the library's dense CUTLASS
// 2.x kernels) runs as CUTLASS runs it internally (device::Gemm's
// column-major-output specialisation and GemmUniversalAdapter transpose
// the problem): D^T = B^T A^T, N x M x K, A's and B's layouts swapped and
// flipped (nn becomes tt), the measured A (the one 2:4 prunes) becoming
// the row's B (sparse_operand activations).
func (p Point) Row() workloads.GEMM {
	g := workloads.GEMM{Name: p.ID, M: p.M, N: p.N, K: p.K,
		Precision: p.Precision, Sparsity: workloads.SparsityFor(p.Precision),
		Count: 1, Batch: 1}
	if p.Pattern != "" {
		g.Sparsity = p.Pattern
	}
	if p.Layout == "" {
		return g
	}
	g.Layout = p.Layout[:2]
	if p.Layout[2] == 'n' {
		flip := map[byte]byte{'n': 't', 't': 'n'}
		g.M, g.N = g.N, g.M
		g.Layout = string([]byte{flip[p.Layout[1]], flip[p.Layout[0]]})
		g.SparseOperand = workloads.OperandActivations
	}
	return g
}
