package validation

import (
	"fmt"
	"math"
	"sort"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// Row is one comparison: a measured value and the simulated one.
type Row struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`   // peak, latency, bandwidth, gemm_dense_time, gemm_sparse_time, gemm_speedup
	Config    string  `json:"config"` // the config it ran on
	Unit      string  `json:"unit"`
	Measured  float64 `json:"measured"`
	Simulated float64 `json:"simulated"`
	// Error is (simulated - measured) / measured.
	Error   float64 `json:"error"`
	HeldOut bool    `json:"held_out"`
	Kernel  string  `json:"kernel,omitempty"`
}

// Summary is the error of one kind of comparison.
type Summary struct {
	Kind string `json:"kind"`
	N    int    `json:"n"`
	// MAPE is the mean absolute relative error over all rows; HeldOutMAPE
	// over the rows not used for calibration (NaN-free: 0 when none).
	MAPE        float64 `json:"mape"`
	HeldOutN    int     `json:"held_out_n"`
	HeldOutMAPE float64 `json:"held_out_mape"`
	// Correlation is Pearson's r of measured vs simulated (GEMM kinds
	// with at least 3 rows; 0 otherwise).
	Correlation float64 `json:"correlation,omitempty"`
}

// Report is the validation result.
type Report struct {
	Rows    []Row     `json:"rows"`
	Summary []Summary `json:"summary"`
	Skipped []string  `json:"skipped,omitempty"`
}

// Options control a validation run.
type Options struct {
	// Configs, when set, replace the per-row hardware match for every row
	// (overlays in order); Sets apply on top either way.
	Configs []string
	Sets    []string
	// Calibrated lists row ids used to calibrate the configs; the others
	// are reported as held out.
	Calibrated []string
}

// DefaultCalibrated are the rows of a100-public.csv whose values set a
// config parameter (see docs/calibration.md); every other row is held out.
var DefaultCalibrated = []string{"bw-dram", "bw-dram-40gb", "lat-l1",
	"lat-l2-near", "lat-l2-far", "lat-dram", "bw-l1", "gemm-16384"}

// Run validates every point it understands.
func Run(points []Point, opt Options) (*Report, error) {
	v := &validator{opt: opt, loaded: map[string]*configs.Loaded{},
		calibrated: map[string]bool{}}
	for _, id := range opt.Calibrated {
		v.calibrated[id] = true
	}
	gemms := map[string][]Point{}
	var order []string
	for _, p := range points {
		name, ld, err := v.config(p)
		if err != nil {
			return nil, err
		}
		if ld == nil {
			v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: no config "+
				"for hardware %q", p.ID, p.Hardware))
			continue
		}
		switch p.Kind {
		case "peak":
			err = v.peak(p, name, ld)
		case "latency", "bandwidth":
			err = v.memory(p, name, ld)
		case "gemm":
			if len(gemms[name]) == 0 {
				order = append(order, name)
			}
			gemms[name] = append(gemms[name], p)
		default:
			v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: unknown "+
				"kind %q", p.ID, p.Kind))
		}
		if err != nil {
			return nil, fmt.Errorf("row %s (line %d): %w", p.ID, p.Line, err)
		}
	}
	for _, name := range order {
		if err := v.gemms(gemms[name], name, v.loaded[name]); err != nil {
			return nil, err
		}
	}
	v.summarize()
	return &v.rep, nil
}

type validator struct {
	opt        Options
	loaded     map[string]*configs.Loaded
	calibrated map[string]bool
	memCache   map[string][]memory.MicroResult
	rep        Report
}

// config loads (once) the config a row runs on.
func (v *validator) config(p Point) (string, *configs.Loaded, error) {
	specs := v.opt.Configs
	if len(specs) == 0 {
		name, ok := ConfigFor(p.Hardware)
		if !ok {
			return "", nil, nil
		}
		if _, ok := configs.BuiltinSource(name); !ok {
			return "", nil, nil
		}
		specs = []string{name}
	}
	key := fmt.Sprint(specs)
	if ld, ok := v.loaded[key]; ok {
		return key, ld, nil
	}
	ld, err := configs.Load(specs, v.opt.Sets)
	if err != nil {
		return "", nil, err
	}
	v.loaded[key] = ld
	return key, ld, nil
}

func (v *validator) add(p Point, kind, unit string, measured, simulated float64, ld *configs.Loaded, kernel string) {
	v.rep.Rows = append(v.rep.Rows, Row{ID: p.ID, Kind: kind,
		Config: ld.Config.Name, Unit: unit, Measured: measured,
		Simulated: simulated, Error: (simulated - measured) / measured,
		HeldOut: !v.calibrated[p.ID], Kernel: kernel})
}

func (v *validator) peak(p Point, name string, ld *configs.Loaded) error {
	c := ld.Config
	r, err := tensorcore.MicroTC(c.TensorCore, c.GPU.SMCount,
		c.SM.SubPartitions, c.GPU.ClockMHz, p.Precision, tensorcore.Dense)
	if err != nil {
		return err
	}
	v.add(p, "peak", p.Unit, p.Dense, r.TFLOPS, ld, "")
	return nil
}

func (v *validator) memory(p Point, name string, ld *configs.Loaded) error {
	level, ok := p.level()
	if !ok {
		v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: cannot tell "+
			"the memory level from the id", p.ID))
		return nil
	}
	if v.memCache == nil {
		v.memCache = map[string][]memory.MicroResult{}
	}
	res, ok := v.memCache[name]
	if !ok {
		c := ld.Config
		var err error
		res, err = memory.MicroMem(c.Memory, clock.MHz(c.GPU.ClockMHz), c.GPU.SMCount)
		if err != nil {
			return err
		}
		v.memCache[name] = res
	}
	for _, r := range res {
		if r.Kind == p.Kind && r.Level == level {
			v.add(p, p.Kind, r.Unit, p.Dense, r.Value, ld, "")
			return nil
		}
	}
	v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: the memory "+
		"microbenchmark has no %s %s figure", p.ID, level, p.Kind))
	return nil
}

// gemms runs all GEMM rows of one config as one simulator run.
func (v *validator) gemms(points []Point, name string, ld *configs.Loaded) error {
	t := &workloads.Trace{Name: "validation"}
	for _, p := range points {
		t.GEMMs = append(t.GEMMs, workloads.GEMM{Name: p.ID, M: p.M, N: p.N,
			K: p.K, Precision: p.Precision, Sparsity: workloads.SparsityFor(p.Precision),
			Count: 1, Batch: 1})
	}
	rep, err := sim.Run(ld, sim.Job{Workloads: []*workloads.Trace{t},
		Modes: tensorcore.Modes})
	if err != nil {
		return fmt.Errorf("GEMM rows on %s: %w", name, err)
	}
	for i, p := range points {
		d, s := rep.Results[2*i], rep.Results[2*i+1]
		v.add(p, "gemm_dense_time", "us", timeUS(p, p.Dense), d.TimeUS, ld, d.Kernel)
		if p.Sparse > 0 {
			v.add(p, "gemm_sparse_time", "us", timeUS(p, p.Sparse), s.TimeUS, ld, s.Kernel)
		}
		if sp := p.Speedup; sp > 0 || p.Sparse > 0 {
			if sp == 0 {
				sp = timeUS(p, p.Dense) / timeUS(p, p.Sparse)
			}
			v.add(p, "gemm_speedup", "x", sp, s.Speedup, ld, "")
		}
	}
	return nil
}

// timeUS converts a GEMM row's value to microseconds.
func timeUS(p Point, v float64) float64 {
	switch p.Unit {
	case "TFLOPS":
		return 2 * float64(p.M) * float64(p.N) * float64(p.K) / (v * 1e12) * 1e6
	case "ms":
		return v * 1e3
	}
	return v
}

func (v *validator) summarize() {
	byKind := map[string][]Row{}
	var kinds []string
	for _, r := range v.rep.Rows {
		if byKind[r.Kind] == nil {
			kinds = append(kinds, r.Kind)
		}
		byKind[r.Kind] = append(byKind[r.Kind], r)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		v.rep.Summary = append(v.rep.Summary, summarizeKind(k, byKind[k]))
	}
}

func summarizeKind(kind string, rows []Row) Summary {
	s := Summary{Kind: kind, N: len(rows)}
	var meas, simd []float64
	for _, r := range rows {
		s.MAPE += math.Abs(r.Error)
		if r.HeldOut {
			s.HeldOutN++
			s.HeldOutMAPE += math.Abs(r.Error)
		}
		meas = append(meas, r.Measured)
		simd = append(simd, r.Simulated)
	}
	s.MAPE /= float64(len(rows))
	if s.HeldOutN > 0 {
		s.HeldOutMAPE /= float64(s.HeldOutN)
	}
	if len(rows) >= 3 && len(kind) > 4 && kind[:4] == "gemm" {
		s.Correlation = pearson(meas, simd)
	}
	return s
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i] / n
		my += y[i] / n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// MaxMAPE is the largest MAPE over the kinds.
func (r *Report) MaxMAPE() (string, float64) {
	kind, worst := "", 0.0
	for _, s := range r.Summary {
		if s.MAPE > worst {
			kind, worst = s.Kind, s.MAPE
		}
	}
	return kind, worst
}
