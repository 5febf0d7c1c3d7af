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
	ID     string `json:"id"`
	Kind   string `json:"kind"`   // peak, latency, bandwidth, gemm_dense_time, gemm_sparse_time, gemm_speedup
	Config string `json:"config"` // the config it ran on
	// ConfigHash is that effective config's SHA-256 (the provenance
	// lists each with its sources).
	ConfigHash string  `json:"config_hash"`
	Unit       string  `json:"unit"`
	Measured   float64 `json:"measured"`
	Simulated  float64 `json:"simulated"`
	// Error is (simulated - measured) / measured: positive when the
	// model is slow (times) or high (throughput, speedup).
	Error   float64 `json:"error"`
	HeldOut bool    `json:"held_out"`
	// Check marks an arithmetic check, not a prediction: a peak row
	// compares configured FMA/clk x units x clock with a published figure.
	Check  bool   `json:"check,omitempty"`
	Kernel string `json:"kernel,omitempty"`
	// Clock is the measurement's clock policy (locked:MHZ, boost, "").
	Clock string `json:"clock,omitempty"`
	// Pinned*: the kernel the measurement names, simulated as such, so
	// that Error (the model's own selection) and PinnedError (the kernel
	// model alone) can be told apart. Absent when the row pins nothing.
	PinnedKernel    string   `json:"pinned_kernel,omitempty"`
	PinnedSimulated float64  `json:"pinned_simulated,omitempty"`
	PinnedError     *float64 `json:"pinned_error,omitempty"`
	// Spread is the ensemble's (max - min) / mean of the selected
	// kernel's cycles (sim.jitter_runs > 1; 0 otherwise).
	Spread float64 `json:"spread,omitempty"`
	// Margin is the selected kernel's estimated lead over the runner-up,
	// (runner-up - winner) / winner (0 with a single candidate).
	Margin float64 `json:"margin,omitempty"`
	// MarginIsBound: the runner-up's sample was stopped once it could not
	// win, so Margin is a lower bound (sim.Candidate.Pruned).
	MarginIsBound bool `json:"margin_is_bound,omitempty"`
	// SimulatedClockMHz is the SM clock a time row's selected kernel ran
	// at: gpu.clock_mhz (the row's locked clock where it names one), or
	// under gpu.clock_policy power_capped the clock the cap chose.
	SimulatedClockMHz int `json:"simulated_clock_mhz,omitempty"`
}

// Summary is the error of one kind of comparison.
type Summary struct {
	Kind string `json:"kind"`
	N    int    `json:"n"`
	// Check: the kind is an arithmetic check (peaks), not a prediction.
	Check bool `json:"check,omitempty"`
	// MAPE is the mean absolute relative error over all rows, Bias the
	// mean signed error; HeldOut* over the rows not used for calibration
	// (0 when none).
	MAPE        float64 `json:"mape"`
	Bias        float64 `json:"bias"`
	HeldOutN    int     `json:"held_out_n"`
	HeldOutMAPE float64 `json:"held_out_mape"`
	HeldOutBias float64 `json:"held_out_bias"`
	// Over and Under count held-out rows with a positive and a negative
	// error.
	Over  int `json:"over"`
	Under int `json:"under"`
	// RankCorrelation is Spearman's rho of measured vs simulated over
	// the held-out rows (gemm_speedup with at least 3 rows): does the
	// model order shapes by speedup as the hardware does?
	RankCorrelation *float64 `json:"rank_correlation,omitempty"`
	// Pinned*: the rows that name their kernel, simulated with it.
	PinnedN    int     `json:"pinned_n,omitempty"`
	PinnedMAPE float64 `json:"pinned_mape,omitempty"`
	PinnedBias float64 `json:"pinned_bias,omitempty"`
}

// Report is the validation result.
type Report struct {
	// Provenance is what produced the report.
	Provenance *Provenance `json:"provenance"`
	Rows       []Row       `json:"rows"`
	Summary    []Summary   `json:"summary"`
	Skipped    []string    `json:"skipped,omitempty"`
}

// Provenance is what produced a validation report: the tool version,
// the points file, the options and every config a row ran on.
type Provenance struct {
	Version string `json:"version"`
	// Command is the command line; Points the points file and PointsSHA256
	// its bytes' hash (both set by the caller that read the file).
	Command      []string `json:"command,omitempty"`
	Points       string   `json:"points,omitempty"`
	PointsSHA256 string   `json:"points_sha256,omitempty"`
	Sets         []string `json:"sets"`
	Calibrated   []string `json:"calibrated"`
	// Configs are the effective configs the rows ran on (a row's
	// config_hash names its own).
	Configs []ConfigUsed `json:"configs"`
}

// ConfigUsed is one effective config of a validation run.
type ConfigUsed struct {
	Name string `json:"name"` // the config's name (rows' config)
	// Sources are the config's sources in merge order (files and --set
	// overrides, a row's locked clock among them); Hash the SHA-256 of
	// the effective config.
	Sources []string `json:"sources"`
	Hash    string   `json:"hash"`
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
	// Progress, when set, is called as the GEMM rows' simulations finish
	// (done and total of one config's GEMMs).
	Progress func(done, total int)
	// MaxWork, when > 0, bounds the estimated simulated work (warp
	// k-steps, sim.EstimateWork) of each GEMM row and of all of them:
	// Run refuses the points before anything is simulated.
	MaxWork float64
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
	if err := v.checkWork(points); err != nil {
		return nil, err
	}
	gemms := map[string][]Point{}
	var order []string
	for _, p := range points {
		name, ld, err := v.config(p, nil)
		if err != nil {
			return nil, fmt.Errorf("row %s (line %d): %w", p.ID, p.Line, err)
		}
		if ld == nil {
			v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: no config "+
				"for hardware %q", p.ID, p.Hardware))
			continue
		}
		switch p.Kind {
		case "peak":
			err = v.peak(p, ld)
		case "latency", "bandwidth":
			err = v.memory(p, name, ld)
		case "gemm":
			if len(gemms[name]) == 0 {
				order = append(order, name)
			}
			gemms[name] = append(gemms[name], p)
		case "mma":
			v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: an mma row "+
				"needs a microbenchmark of one instruction shape at given warps "+
				"per SM and MMAs in flight, which stcsim micro tc does not run", p.ID))
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
	v.rep.Provenance = v.provenance()
	return &v.rep, nil
}

// checkWork refuses, before anything runs, a GEMM row whose estimated
// work (dense and sparse, on the config it runs on) or the rows' sum is
// above Options.MaxWork.
func (v *validator) checkWork(points []Point) error {
	if v.opt.MaxWork <= 0 {
		return nil
	}
	total := 0.0
	for _, p := range points {
		if p.Kind != "gemm" {
			continue
		}
		_, ld, err := v.config(p, nil)
		if err != nil || ld == nil {
			continue // Run reports it
		}
		job := sim.Job{Workloads: []*workloads.Trace{{Name: "validation",
			GEMMs: []workloads.GEMM{gemmOf(p)}}}, Modes: tensorcore.Modes}
		w := sim.EstimateWork(ld.Config, job)
		if w > v.opt.MaxWork {
			return fmt.Errorf("row %s (line %d): estimated work %s is above "+
				"--max-work %.3g; drop the row or raise --max-work", p.ID, p.Line,
				sim.DescribeWork(w), v.opt.MaxWork)
		}
		total += w
	}
	if total > v.opt.MaxWork {
		return fmt.Errorf("the GEMM rows' estimated work %s is above --max-work "+
			"%.3g; run a subset (--rows, --kind) or raise --max-work",
			sim.DescribeWork(total), v.opt.MaxWork)
	}
	return nil
}

// provenance records the options and the configs loaded, by name.
func (v *validator) provenance() *Provenance {
	p := &Provenance{Version: sim.Version, Sets: append([]string{}, v.opt.Sets...),
		Calibrated: append([]string{}, v.opt.Calibrated...), Configs: []ConfigUsed{}}
	names := make([]string, 0, len(v.loaded))
	for name := range v.loaded {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ld := v.loaded[name]
		p.Configs = append(p.Configs, ConfigUsed{Name: ld.Config.Name,
			Sources: append([]string{}, ld.Sources...), Hash: ld.Hash()})
	}
	return p
}

type validator struct {
	opt        Options
	loaded     map[string]*configs.Loaded
	calibrated map[string]bool
	memCache   map[string][]memory.MicroResult
	rep        Report
}

// config loads (once) the config a row runs on: its hardware's built-in
// config (or Options.Configs), the row's locked clock, Options.Sets, then
// extra (a pinned kernel).
func (v *validator) config(p Point, extra []string) (string, *configs.Loaded, error) {
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
	var sets []string
	if mhz, _ := p.LockedMHz(); mhz > 0 {
		sets = append(sets, fmt.Sprintf("gpu.clock_mhz=%d", mhz))
	}
	sets = append(append(sets, v.opt.Sets...), extra...)
	key := fmt.Sprint(specs, sets)
	if ld, ok := v.loaded[key]; ok {
		return key, ld, nil
	}
	ld, err := configs.Load(specs, sets)
	if err != nil {
		return "", nil, err
	}
	v.loaded[key] = ld
	return key, ld, nil
}

func (v *validator) add(p Point, kind, unit string, measured, simulated float64, ld *configs.Loaded, kernel string) *Row {
	v.rep.Rows = append(v.rep.Rows, Row{ID: p.ID, Kind: kind,
		Config: ld.Config.Name, ConfigHash: ld.Hash(), Unit: unit, Measured: measured,
		Simulated: simulated, Error: (simulated - measured) / measured,
		HeldOut: !v.calibrated[p.ID], Kernel: kernel, Clock: p.Clock})
	return &v.rep.Rows[len(v.rep.Rows)-1]
}

// peak compares the tensor-core microbenchmark's peak with a published
// one. The model's peak is configured FMA/clk x units x clock, so this
// checks the arithmetic of the configuration; it predicts nothing.
func (v *validator) peak(p Point, ld *configs.Loaded) error {
	c := ld.Config
	r, err := tensorcore.MicroTC(c.TensorCore, c.GPU.SMCount,
		c.SM.SubPartitions, c.GPU.ClockMHz, p.Precision, tensorcore.Dense)
	if err != nil {
		return err
	}
	row := v.add(p, "peak", p.Unit, p.Dense, r.TFLOPS, ld, "")
	row.Check, row.HeldOut = true, false
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

// gemms runs all GEMM rows of one config as one simulator run (the
// model's own kernel selection), then each pinned kernel on its own.
func (v *validator) gemms(points []Point, name string, ld *configs.Loaded) error {
	t := &workloads.Trace{Name: "validation"}
	for _, p := range points {
		t.GEMMs = append(t.GEMMs, gemmOf(p))
	}
	rep, err := sim.Run(ld, sim.Job{Workloads: []*workloads.Trace{t},
		Modes: tensorcore.Modes, Progress: v.opt.Progress})
	if err != nil {
		return fmt.Errorf("GEMM rows on %s: %w", name, err)
	}
	for i, p := range points {
		d, s := rep.Results[2*i], rep.Results[2*i+1]
		pd, ps, err := v.pinned(p)
		if err != nil {
			return err
		}
		dt, st := timeUS(p, p.Dense), timeUS(p, p.Sparse)
		v.addTime(p, "gemm_dense_time", dt, d, pd, ld)
		if p.Sparse > 0 {
			v.addTime(p, "gemm_sparse_time", st, s, ps, ld)
		}
		if sp := p.Speedup; sp > 0 || p.Sparse > 0 {
			if sp == 0 {
				sp = dt / st
			}
			row := v.add(p, "gemm_speedup", "x", sp, s.Speedup, ld, "")
			if pd != nil && ps != nil {
				row.setPinned("", pd.TimeUS/ps.TimeUS)
			}
		}
	}
	return nil
}

func gemmOf(p Point) workloads.GEMM {
	return workloads.GEMM{Name: p.ID, M: p.M, N: p.N, K: p.K,
		Precision: p.Precision, Sparsity: workloads.SparsityFor(p.Precision),
		Count: 1, Batch: 1}
}

func (v *validator) addTime(p Point, kind string, measured float64, sel sim.LayerResult, pin *sim.LayerResult, ld *configs.Loaded) {
	row := v.add(p, kind, "us", measured, sel.TimeUS, ld, sel.Kernel)
	row.Spread = sel.CyclesSpread
	row.Margin, row.MarginIsBound = sel.Margin(), sel.MarginIsBound()
	row.SimulatedClockMHz = sel.ClockMHz
	if pin != nil {
		row.setPinned(pin.Kernel, pin.TimeUS)
	}
}

func (r *Row) setPinned(kernel string, simulated float64) {
	e := (simulated - r.Measured) / r.Measured
	r.PinnedKernel, r.PinnedSimulated, r.PinnedError = kernel, simulated, &e
}

// pinned simulates the kernels a row names, each mode on its own with
// kernel.force (and split_k) set; nil for a mode the row does not pin.
func (v *validator) pinned(p Point) (dense, sparse *sim.LayerResult, err error) {
	out := map[tensorcore.Mode]*sim.LayerResult{}
	for _, mode := range tensorcore.Modes {
		name, ok := p.Kernels[mode]
		if !ok {
			continue
		}
		tile, splitK := pinnedPlan(name)
		_, ld, err := v.config(p, []string{"kernel.force=" + tile,
			fmt.Sprintf("kernel.split_k=[%d]", splitK)})
		if err != nil {
			return nil, nil, fmt.Errorf("row %s (line %d): pinned %s kernel %s: %w",
				p.ID, p.Line, mode, name, err)
		}
		t := &workloads.Trace{Name: "validation", GEMMs: []workloads.GEMM{gemmOf(p)}}
		rep, err := sim.Run(ld, sim.Job{Workloads: []*workloads.Trace{t},
			Modes: []tensorcore.Mode{mode}})
		if err != nil {
			return nil, nil, fmt.Errorf("row %s: pinned %s kernel %s: %w", p.ID,
				mode, name, err)
		}
		r := rep.Results[0]
		if r.Kernel != name {
			return nil, nil, fmt.Errorf("row %s (line %d): pinned %s kernel %s "+
				"cannot run this GEMM as named (the model ran %s)", p.ID, p.Line,
				mode, name, r.Kernel)
		}
		out[mode] = &r
	}
	return out[tensorcore.Dense], out[tensorcore.Sparse], nil
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
		s.Check = s.Check || r.Check
		s.MAPE += math.Abs(r.Error)
		s.Bias += r.Error
		if r.PinnedError != nil {
			s.PinnedN++
			s.PinnedMAPE += math.Abs(*r.PinnedError)
			s.PinnedBias += *r.PinnedError
		}
		if !r.HeldOut {
			continue
		}
		s.HeldOutN++
		s.HeldOutMAPE += math.Abs(r.Error)
		s.HeldOutBias += r.Error
		switch {
		case r.Error > 0:
			s.Over++
		case r.Error < 0:
			s.Under++
		}
		meas = append(meas, r.Measured)
		simd = append(simd, r.Simulated)
	}
	s.MAPE /= float64(len(rows))
	s.Bias /= float64(len(rows))
	if s.HeldOutN > 0 {
		s.HeldOutMAPE /= float64(s.HeldOutN)
		s.HeldOutBias /= float64(s.HeldOutN)
	}
	if s.PinnedN > 0 {
		s.PinnedMAPE /= float64(s.PinnedN)
		s.PinnedBias /= float64(s.PinnedN)
	}
	if kind == "gemm_speedup" && len(meas) >= 3 {
		rho := spearman(meas, simd)
		s.RankCorrelation = &rho
	}
	return s
}

// spearman is Spearman's rank correlation: Pearson's r of the ranks
// (ties share their mean rank).
func spearman(x, y []float64) float64 {
	return pearson(ranks(x), ranks(y))
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
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
