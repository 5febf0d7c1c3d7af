package validation

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/tensorcore/unit"
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
	// K is a GEMM row's reduction length (0 for the other kinds), by
	// which the speedup summary splits short-K from long-K layers.
	K int `json:"k,omitempty"`
	// Clock is the measurement's clock condition for this row's mode
	// (locked:MHZ, boost, ""); Harness how its time was taken.
	Clock   string `json:"clock,omitempty"`
	Harness string `json:"harness,omitempty"`
	// Conditions is what the simulation ran under for Error: a locked
	// clock, or boost under the board's power limit (gpu.clock_policy
	// power_capped), for rows with an unstated clock too.
	Conditions string `json:"conditions,omitempty"`
	// Boost*: the same row simulated at the config's locked boost clock
	// (gpu.clock_mhz, clock_policy locked), so that a reader sees what the
	// conditions do. Absent when the conditions are that clock, or
	// Options.Conditions is not "both".
	BoostSimulated float64  `json:"boost_simulated,omitempty"`
	BoostError     *float64 `json:"boost_error,omitempty"`
	BoostClockMHz  int      `json:"boost_clock_mhz,omitempty"`
	// FixedUS and MainloopUS split Simulated (Options.FixedCosts): the
	// selected kernel, at the clock it ran at, simulated again at 2K gives
	// T(2K); on the line T(K) = fixed + mainloop, fixed = 2 T(K) - T(2K)
	// (launch, prologue fill, epilogue, the last wave's tail: whatever
	// does not grow with K) and mainloop = T(K) - fixed.
	FixedUS    float64 `json:"fixed_us,omitempty"`
	MainloopUS float64 `json:"mainloop_us,omitempty"`
	// Phases split a time row's simulated time (the kernel that ran,
	// under the row's conditions) by phase, from the run itself
	// (results.Phases: launch, prologue fill, mainloop, epilogue, last
	// wave); absent on a tier that has no time account (sim/fast).
	Phases *results.Phases `json:"phases,omitempty"`
	// Operands are the harness's operand values and the bit activity
	// (power.data_activity) they give, where the harness says what it
	// multiplies (validation/harness.go).
	Operands string `json:"operands,omitempty"`
	// L2Start says why the kernel starts with the L2 as the previous
	// call left it, where the harness loops (kernel.l2_start=repeat).
	L2Start string `json:"l2_start,omitempty"`
	// CRead says where the C the library's epilogue reads comes from,
	// where the harness hands it one of the output's shape (the run sets
	// kernel.beta=1; validation/harness.go).
	CRead string `json:"c_read,omitempty"`
	// Timing says what the harness's time leaves out of the call, where
	// the model leaves it out too (Nsight Compute's kernel duration: no
	// launch gap, sm.kernel_launch_latency=0).
	Timing string `json:"timing,omitempty"`
	// Pinned*: the kernel the measurement names, simulated as such. A
	// row that names its kernel ran that kernel, so Simulated, Error and
	// Kernel are the pinned kernel's, and Selected* the model's own
	// choice, so that the kernel model and the selection can be told
	// apart. Absent when the row pins nothing.
	PinnedKernel    string   `json:"pinned_kernel,omitempty"`
	PinnedSimulated float64  `json:"pinned_simulated,omitempty"`
	PinnedError     *float64 `json:"pinned_error,omitempty"`
	// Selected*: the model's own kernel selection on a row that names its
	// kernel (the speedup: from the modes' own selections).
	SelectedKernel    string   `json:"selected_kernel,omitempty"`
	SelectedSimulated float64  `json:"selected_simulated,omitempty"`
	SelectedError     *float64 `json:"selected_error,omitempty"`
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
	// KGap is the speedup's fall from long-K to short-K layers over the
	// held-out rows (gemm_speedup, when both groups have rows): a short-K
	// layer gains less, as its fixed costs weigh more against a halved
	// sparse mainloop.
	KGap *KGap `json:"k_gap,omitempty"`
	// Boost*: the held-out rows with a Boost value, at the locked
	// boost clock.
	BoostN    int     `json:"boost_n,omitempty"`
	BoostMAPE float64 `json:"boost_mape,omitempty"`
	BoostBias float64 `json:"boost_bias,omitempty"`
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
	// Notes say what a reader should know about the rows' roles (a
	// calibration row measured under uncontrolled conditions).
	Notes []string `json:"notes,omitempty"`
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
	// Progress, when set, is called as the GEMM rows' simulations finish:
	// done and total count every GEMM simulation of the run (each row's
	// mode under its conditions and at boost, the fixed-cost runs at twice
	// the K, the pinned kernels).
	Progress func(done, total int)
	// Conditions: "measured" runs each GEMM row under the conditions it
	// was measured in (its locked clock, or boost under the board's power
	// limit); "boost" at the config's locked boost clock; "both" (the
	// default, "") reports the first as Error and the second as Boost*.
	Conditions string
	// Cache and CacheSalt are given to every simulation (sim.Job).
	Cache     sim.Cache
	CacheSalt string
	// FixedCosts: also split each GEMM row's simulated time into a fixed
	// part and the steady mainloop, by simulating its kernel again at
	// twice the K (Row.FixedUS).
	FixedCosts bool
	// MaxWork, when > 0, bounds the estimated simulated work (warp
	// k-steps, sim.EstimateWork) of each GEMM row and of all of them:
	// Run refuses the points before anything is simulated.
	MaxWork float64
}

// DefaultCalibrated are the rows of a100-public.csv whose values set a
// config parameter (see docs/calibration.md), each controlled (Point.
// Controlled): the memory microbenchmarks and gemm-16384's sparse time
// (locked at 1410 MHz; its dense time, clock not stated, is held out).
// An id alone names every mode of its row, ID:MODE one. Every other row
// is held out.
var DefaultCalibrated = []string{"bw-dram", "bw-dram-40gb", "bw-dram-write",
	"bw-dram-write-40gb", "bw-dram-copy-40gb", "bw-l2", "lat-l1",
	"lat-l2-near", "lat-l2-far", "lat-dram", "bw-l1", "gemm-16384:sparse"}

// ConditionModes are the values of Options.Conditions.
var ConditionModes = []string{"both", "measured", "boost"}

// Run validates every point it understands.
func Run(points []Point, opt Options) (*Report, error) {
	v := &validator{opt: opt, loaded: map[string]*configs.Loaded{},
		calibrated: map[string]bool{}}
	switch opt.Conditions {
	case "", "both", "measured", "boost":
	default:
		return nil, fmt.Errorf("conditions %q: want both, measured or boost", opt.Conditions)
	}
	for _, id := range opt.Calibrated {
		v.calibrated[id] = true
	}
	if err := v.checkWork(points); err != nil {
		return nil, err
	}
	var gemmPts []Point
	for _, p := range points {
		// A microbenchmark row runs at its locked clock where it names
		// one (GEMM rows take their conditions per mode in gemms).
		var locked []string
		if mhz := p.LockedMHz(tensorcore.Dense); mhz > 0 && p.Kind != "gemm" {
			locked = []string{fmt.Sprintf("gpu.clock_mhz=%d", mhz)}
		}
		name, ld, err := v.config(p, locked)
		if err != nil {
			return nil, fmt.Errorf("row %s (line %d): %w", p.ID, p.Line, err)
		}
		v.noteUncontrolled(p)
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
			gemmPts = append(gemmPts, p)
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
	if err := v.gemms(gemmPts); err != nil {
		return nil, err
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
	// done and total count the GEMM simulations for Options.Progress.
	done, total int
}

// simulate runs one job of GEMM rows with the run's cache, counting its
// GEMMs into the run's progress.
func (v *validator) simulate(ld *configs.Loaded, t *workloads.Trace, mode tensorcore.Mode) (*sim.Report, error) {
	job := sim.Job{Cache: v.opt.Cache, CacheSalt: v.opt.CacheSalt,
		Workloads: []*workloads.Trace{t}, Modes: []tensorcore.Mode{mode}}
	base := v.done
	if v.opt.Progress != nil {
		job.Progress = func(done, _ int) { v.opt.Progress(base+done, max(v.total, base+done)) }
	}
	rep, err := sim.Run(ld, job)
	v.done = base + len(t.GEMMs)
	return rep, err
}

// config loads (once) the config a row runs on: its hardware's built-in
// config (or Options.Configs), Options.Sets, then extra (the conditions
// of a GEMM row's mode, which so override a --set of the clock, and a
// pinned kernel).
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
	sets := append(append([]string{}, v.opt.Sets...), extra...)
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
		HeldOut: !v.isCalibrated(p, kind), Kernel: kernel, Harness: p.HarnessOf(rowModes(kind)[0])})
	r := &v.rep.Rows[len(v.rep.Rows)-1]
	if p.Kind == "gemm" {
		r.K = p.K
	}
	return r
}

// rowModes are the modes a comparison kind depends on.
func rowModes(kind string) []tensorcore.Mode {
	switch kind {
	case "gemm_dense_time":
		return []tensorcore.Mode{tensorcore.Dense}
	case "gemm_sparse_time":
		return []tensorcore.Mode{tensorcore.Sparse}
	}
	return tensorcore.Modes
}

// isCalibrated: the row's id, or ID:MODE for every mode the kind
// depends on, is among Options.Calibrated.
func (v *validator) isCalibrated(p Point, kind string) bool {
	if v.calibrated[p.ID] {
		return true
	}
	for _, m := range rowModes(kind) {
		if !v.calibrated[p.ID+":"+m.String()] {
			return false
		}
	}
	return true
}

// noteUncontrolled says when a calibration row was not measured under
// controlled conditions (Point.Controlled): its value then sets a
// parameter from a measurement whose clock or kernel is not known.
func (v *validator) noteUncontrolled(p Point) {
	for _, m := range tensorcore.Modes {
		named := v.calibrated[p.ID] || v.calibrated[p.ID+":"+m.String()]
		if !named || p.Controlled(m) || (p.Kind == "gemm" && m == tensorcore.Sparse && p.Sparse == 0) {
			continue
		}
		if p.Kind != "gemm" && m == tensorcore.Sparse {
			continue
		}
		what := m.String() + " time of "
		if p.Kind != "gemm" {
			what = ""
		}
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("the %s%s "+
			"is a calibration row but not controlled (clock %q, harness %q): "+
			"controlled means a microbenchmark, or a locked clock and a named "+
			"kernel (docs/calibration.md)", what, p.ID, p.ClockOf(m), p.HarnessOf(m)))
	}
}

// peak compares the tensor-core microbenchmark's peak with a published
// one. The model's peak is configured FMA/clk x units x clock, so this
// checks the arithmetic of the configuration; it predicts nothing.
func (v *validator) peak(p Point, ld *configs.Loaded) error {
	c := ld.Config
	r, err := unit.MicroTC(c.TensorCore, c.GPU.SMCount,
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

// conditions are the sets that make mode m of a GEMM row run as it was
// measured: its locked clock, or (boost, or not stated) the board's own
// boost under its power limit. The text says so in the report.
func conditions(p Point, m tensorcore.Mode, ld *configs.Loaded) ([]string, string, error) {
	if mhz := p.LockedMHz(m); mhz > 0 {
		return []string{fmt.Sprintf("gpu.clock_mhz=%d", mhz), "gpu.clock_policy=locked"},
			fmt.Sprintf("locked %d MHz", mhz), nil
	}
	text := fmt.Sprintf("boost under %g W", ld.Config.Power.LimitW)
	if p.ClockOf(m) == "" {
		text = "clock not stated: " + text
	}
	return []string{"gpu.clock_policy=power_capped"}, text, nil
}

// gemmRun is one simulator run: the GEMM rows of one effective config in
// one mode.
type gemmRun struct {
	ld     *configs.Loaded
	mode   tensorcore.Mode
	points []int // indices into the rows
	out    map[int]sim.LayerResult
}

// gemmResult is a GEMM row's mode under one variant (its conditions, or
// the locked boost clock).
type gemmResult struct {
	res        sim.LayerResult
	conditions string
	key        string // the run's key
	ld         *configs.Loaded
}

// gemms runs every GEMM row in each mode under its conditions and at the
// locked boost clock (Options.Conditions), one simulator run per
// effective config and mode (the model's own kernel selection), then each
// pinned kernel on its own.
func (v *validator) gemms(points []Point) error {
	measured := v.opt.Conditions != "boost"
	boost := v.opt.Conditions == "" || v.opt.Conditions == "both" || v.opt.Conditions == "boost"
	runs := map[string]*gemmRun{}
	var order []string
	type slot struct {
		key  string
		text string
	}
	// plan[i][mode][0]: conditions, [1]: boost ("" key: not run)
	plan := make([]map[tensorcore.Mode][2]slot, len(points))
	for i, p := range points {
		plan[i] = map[tensorcore.Mode][2]slot{}
		_, base, err := v.config(p, nil)
		if err != nil || base == nil {
			return fmt.Errorf("row %s (line %d): %v", p.ID, p.Line, err)
		}
		for _, m := range tensorcore.Modes {
			if m == tensorcore.Sparse && p.Sparse == 0 && p.Speedup == 0 {
				continue
			}
			var sl [2]slot
			for variant, on := range []bool{measured, boost} {
				if !on {
					continue
				}
				var sets []string
				text := fmt.Sprintf("locked %d MHz (boost clock)", base.Config.GPU.ClockMHz)
				if variant == 0 {
					if sets, text, err = conditions(p, m, base); err != nil {
						return err
					}
				} else {
					sets = []string{"gpu.clock_policy=locked"}
				}
				h, err := harnessOf(p, m)
				if err != nil {
					return fmt.Errorf("row %s (line %d): harness %s: %w", p.ID, p.Line, p.HarnessOf(m), err)
				}
				sets = append(sets, h.sets...)
				_, ld, err := v.config(p, sets)
				if err != nil {
					return fmt.Errorf("row %s (line %d): %w", p.ID, p.Line, err)
				}
				// Runs are keyed by the effective config, so that a row's
				// conditions that are the boost clock share its run.
				rk := ld.Hash() + "|" + m.String()
				if runs[rk] == nil {
					runs[rk] = &gemmRun{ld: ld, mode: m, out: map[int]sim.LayerResult{}}
					order = append(order, rk)
				}
				if !slices.Contains(runs[rk].points, i) {
					runs[rk].points = append(runs[rk].points, i)
				}
				sl[variant] = slot{key: rk, text: text}
			}
			if sl[0].key == sl[1].key {
				sl[1] = slot{} // the conditions are the boost clock
			}
			plan[i][m] = sl
		}
	}
	primary := 0
	if !measured {
		primary = 1
	}
	// The total is every simulation below: the runs, one at twice the K
	// per row and mode with fixed costs, one per pinned kernel.
	for _, rk := range order {
		v.total += len(runs[rk].points)
	}
	for i, p := range points {
		for _, m := range tensorcore.Modes {
			if v.opt.FixedCosts && plan[i][m][primary].key != "" {
				v.total++
			}
			if _, ok := p.Kernels[m]; ok {
				for variant := range 2 {
					if plan[i][m][variant].key != "" {
						v.total++
					}
				}
			}
		}
	}
	for _, rk := range order {
		r := runs[rk]
		t := &workloads.Trace{Name: "validation"}
		for _, i := range r.points {
			t.GEMMs = append(t.GEMMs, gemmOf(points[i]))
		}
		rep, err := v.simulate(r.ld, t, r.mode)
		if err != nil {
			return fmt.Errorf("GEMM rows on %s (%s): %w", r.ld.Config.Name, r.mode, err)
		}
		for j, i := range r.points {
			r.out[i] = rep.Results[j]
		}
	}
	get := func(i int, m tensorcore.Mode, variant int) *gemmResult {
		sl := plan[i][m][variant]
		if sl.key == "" {
			return nil
		}
		return &gemmResult{res: runs[sl.key].out[i], conditions: sl.text, key: sl.key,
			ld: runs[sl.key].ld}
	}
	// pins[variant][i][m]: the kernel row i names for mode m, simulated
	// under its conditions (variant 0) and at the locked boost clock
	// (variant 1) where that mode runs in that variant (nil when the row
	// names no kernel for it).
	var pins [2][][2]*sim.LayerResult
	for variant := range pins {
		pins[variant] = make([][2]*sim.LayerResult, len(points))
		for i, p := range points {
			for _, m := range tensorcore.Modes {
				if _, ok := p.Kernels[m]; !ok || plan[i][m][variant].key == "" {
					continue
				}
				r, err := v.pinned(p, m, variant)
				if err != nil {
					return err
				}
				pins[variant][i][m] = r
			}
		}
	}
	fixed := map[[2]int]float64{} // (point, mode) -> T(2K) in us
	if v.opt.FixedCosts {
		for i, p := range points {
			for _, m := range tensorcore.Modes {
				r := get(i, m, primary)
				if r == nil {
					continue
				}
				res := r.res
				if pin := pins[primary][i][m]; pin != nil {
					res = *pin // the kernel that ran
				}
				t2, err := v.atDoubleK(p, m, res)
				if err != nil {
					return err
				}
				fixed[[2]int{i, int(m)}] = t2
			}
		}
	}
	for i, p := range points {
		pd, ps := pins[primary][i][tensorcore.Dense], pins[primary][i][tensorcore.Sparse]
		d, s := get(i, tensorcore.Dense, primary), get(i, tensorcore.Sparse, primary)
		bd, bs := get(i, tensorcore.Dense, 1), get(i, tensorcore.Sparse, 1)
		bpd, bps := pins[1][i][tensorcore.Dense], pins[1][i][tensorcore.Sparse]
		if primary == 1 {
			bd, bs, bpd, bps = nil, nil, nil, nil
		}
		// At boost, a row that names its kernel runs that kernel too.
		if bd != nil && bpd != nil {
			bd = &gemmResult{res: *bpd}
		}
		if bs != nil && bps != nil {
			bs = &gemmResult{res: *bps}
		}
		dt, st := timeUS(p, p.Dense), timeUS(p, p.Sparse)
		v.addTime(p, tensorcore.Dense, dt, d, bd, pd)
		v.setFixed(fixed, i, tensorcore.Dense)
		if p.Sparse > 0 {
			v.addTime(p, tensorcore.Sparse, st, s, bs, ps)
			v.setFixed(fixed, i, tensorcore.Sparse)
		}
		if sp := p.Speedup; (sp > 0 || p.Sparse > 0) && s != nil {
			if sp == 0 {
				sp = dt / st
			}
			dsim, ssim := d.res.TimeUS, s.res.TimeUS
			if pd != nil {
				dsim = pd.TimeUS
			}
			if ps != nil {
				ssim = ps.TimeUS
			}
			row := v.add(p, "gemm_speedup", "x", sp, dsim/ssim, d.ld, "")
			if pd != nil || ps != nil {
				row.setSelected("", d.res.TimeUS/s.res.TimeUS)
			}
			row.Clock, row.Conditions, row.Harness = p.Clock, d.conditions, p.Harness
			if d.conditions != s.conditions {
				row.Conditions = "dense " + d.conditions + "; sparse " + s.conditions
			}
			if bd != nil || bs != nil {
				bdt, bst := dsim, ssim
				if bd != nil {
					bdt = bd.res.TimeUS
				}
				if bs != nil {
					bst = bs.res.TimeUS
				}
				row.setBoost(bdt/bst, 0)
			}
			if pd != nil && ps != nil {
				row.setPinned("", dsim/ssim)
			}
		}
	}
	return nil
}

func gemmOf(p Point) workloads.GEMM { return p.Row() }

func (v *validator) addTime(p Point, m tensorcore.Mode, measured float64, sel, boost *gemmResult, pin *sim.LayerResult) {
	kind := "gemm_" + m.String() + "_time"
	row := v.add(p, kind, "us", measured, sel.res.TimeUS, sel.ld, sel.res.Kernel)
	row.Clock, row.Conditions = p.ClockOf(m), sel.conditions
	if h, err := harnessOf(p, m); err == nil {
		row.Operands, row.L2Start, row.CRead, row.Timing = h.operands, h.l2, h.cRead, h.timing
	}
	row.Spread = sel.res.CyclesSpread
	row.Margin, row.MarginIsBound = sel.res.Margin(), sel.res.MarginIsBound()
	row.SimulatedClockMHz = sel.res.ClockMHz
	row.setPhases(sel.res.Phases)
	if boost != nil {
		row.setBoost(boost.res.TimeUS, boost.res.ClockMHz)
	}
	if pin != nil {
		row.setPinned(pin.Kernel, pin.TimeUS)
		row.setSelected(row.Kernel, row.Simulated)
		row.Kernel, row.Simulated, row.Error = pin.Kernel, pin.TimeUS, *row.PinnedError
		row.SimulatedClockMHz = pin.ClockMHz
		row.setPhases(pin.Phases)
	}
}

func (r *Row) setPhases(p results.Phases) {
	r.Phases = nil
	if p.Mainloop > 0 {
		r.Phases = &p
	}
}

// atDoubleK is the time of mode m's selected kernel (res) on the row's
// GEMM with twice its K, at the clock and data activity it ran at.
func (v *validator) atDoubleK(p Point, m tensorcore.Mode, res sim.LayerResult) (float64, error) {
	h, err := harnessOf(p, m)
	if err != nil {
		return 0, err
	}
	tile, splitK := pinnedPlan(res.Kernel)
	sets := append([]string{fmt.Sprintf("gpu.clock_mhz=%d", res.ClockMHz),
		"gpu.clock_policy=locked", "kernel.force=" + tile,
		fmt.Sprintf("kernel.split_k=[%d]", splitK)}, h.sets...)
	_, ld, err := v.config(p, sets)
	if err != nil {
		return 0, fmt.Errorf("row %s (line %d): fixed costs: %w", p.ID, p.Line, err)
	}
	g := gemmOf(p)
	g.K *= 2
	rep, err := v.simulate(ld, &workloads.Trace{Name: "validation", GEMMs: []workloads.GEMM{g}}, m)
	if err != nil {
		return 0, fmt.Errorf("row %s (line %d): fixed costs at K=%d: %w", p.ID, p.Line, g.K, err)
	}
	if got := rep.Results[0].Kernel; got != res.Kernel {
		return 0, fmt.Errorf("row %s (line %d): fixed costs: kernel %s ran as %s at K=%d",
			p.ID, p.Line, res.Kernel, got, g.K)
	}
	return rep.Results[0].TimeUS, nil
}

// setFixed splits the last row added (mode m of point i) into its fixed
// part and mainloop.
func (v *validator) setFixed(fixed map[[2]int]float64, i int, m tensorcore.Mode) {
	t2, ok := fixed[[2]int{i, int(m)}]
	if !ok {
		return
	}
	r := &v.rep.Rows[len(v.rep.Rows)-1]
	r.FixedUS = 2*r.Simulated - t2
	r.MainloopUS = r.Simulated - r.FixedUS
}

func (r *Row) setBoost(simulated float64, mhz int) {
	e := (simulated - r.Measured) / r.Measured
	r.BoostSimulated, r.BoostError, r.BoostClockMHz = simulated, &e, mhz
}

func (r *Row) setSelected(kernel string, simulated float64) {
	e := (simulated - r.Measured) / r.Measured
	r.SelectedKernel, r.SelectedSimulated, r.SelectedError = kernel, simulated, &e
}

func (r *Row) setPinned(kernel string, simulated float64) {
	e := (simulated - r.Measured) / r.Measured
	r.PinnedKernel, r.PinnedSimulated, r.PinnedError = kernel, simulated, &e
}

// pinned simulates the kernel a row names for mode, with kernel.force
// (and split_k) set, under the row's conditions (variant 0) or at the
// config's locked boost clock (variant 1).
func (v *validator) pinned(p Point, mode tensorcore.Mode, variant int) (*sim.LayerResult, error) {
	name := p.Kernels[mode]
	tile, splitK := pinnedPlan(name)
	_, base, err := v.config(p, nil)
	if err != nil {
		return nil, err
	}
	sets := []string{"gpu.clock_policy=locked"}
	if variant == 0 {
		if sets, _, err = conditions(p, mode, base); err != nil {
			return nil, err
		}
	}
	h, err := harnessOf(p, mode)
	if err != nil {
		return nil, err
	}
	sets = append(sets, h.sets...)
	_, ld, err := v.config(p, append(sets, "kernel.force="+tile,
		fmt.Sprintf("kernel.split_k=[%d]", splitK)))
	if err != nil {
		return nil, fmt.Errorf("row %s (line %d): pinned %s kernel %s: %w",
			p.ID, p.Line, mode, name, err)
	}
	t := &workloads.Trace{Name: "validation", GEMMs: []workloads.GEMM{gemmOf(p)}}
	rep, err := v.simulate(ld, t, mode)
	if err != nil {
		return nil, fmt.Errorf("row %s: pinned %s kernel %s: %w", p.ID,
			mode, name, err)
	}
	r := rep.Results[0]
	if r.Kernel != name {
		return nil, fmt.Errorf("row %s (line %d): pinned %s kernel %s "+
			"cannot run this GEMM as named (the model ran %s)", p.ID, p.Line,
			mode, name, r.Kernel)
	}
	return &r, nil
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

func (v *validator) summarize() { v.rep.Summary = Summarize(v.rep.Rows) }

// Summarize is the per-kind summary of rows (what Run reports), for
// reports merged from several runs.
func Summarize(rows []Row) []Summary {
	var out []Summary
	byKind := map[string][]Row{}
	var kinds []string
	for _, r := range rows {
		if byKind[r.Kind] == nil {
			kinds = append(kinds, r.Kind)
		}
		byKind[r.Kind] = append(byKind[r.Kind], r)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		out = append(out, summarizeKind(k, byKind[k]))
	}
	return out
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
		if r.BoostError != nil {
			s.BoostN++
			s.BoostMAPE += math.Abs(*r.BoostError)
			s.BoostBias += *r.BoostError
		}
	}
	s.MAPE /= float64(len(rows))
	s.Bias /= float64(len(rows))
	if s.HeldOutN > 0 {
		s.HeldOutMAPE /= float64(s.HeldOutN)
		s.HeldOutBias /= float64(s.HeldOutN)
	}
	if s.BoostN > 0 {
		s.BoostMAPE /= float64(s.BoostN)
		s.BoostBias /= float64(s.BoostN)
	}
	if s.PinnedN > 0 {
		s.PinnedMAPE /= float64(s.PinnedN)
		s.PinnedBias /= float64(s.PinnedN)
	}
	if kind == "gemm_speedup" && len(meas) >= 3 {
		rho := spearman(meas, simd)
		s.RankCorrelation = &rho
	}
	if kind == "gemm_speedup" {
		s.KGap = kGap(rows)
	}
	return s
}

// The K groups of the speedup's K gap (issue 30's: the rows of the
// published points with K = 3072 and more, and with K = 768 and less).
const (
	LongK  = 3072
	ShortK = 768
)

// KGap is the mean speedup of the held-out rows with K >= LongK minus
// that of the rows with K <= ShortK, measured and simulated.
type KGap struct {
	LongN     int     `json:"long_n"`
	ShortN    int     `json:"short_n"`
	Measured  float64 `json:"measured"`
	Simulated float64 `json:"simulated"`
}

// kGap is rows' KGap (nil when a group is empty).
func kGap(rows []Row) *KGap {
	var g KGap
	var long, short [2]float64
	for _, r := range rows {
		switch {
		case !r.HeldOut || r.K == 0:
		case r.K >= LongK:
			g.LongN++
			long[0] += r.Measured
			long[1] += r.Simulated
		case r.K <= ShortK:
			g.ShortN++
			short[0] += r.Measured
			short[1] += r.Simulated
		}
	}
	if g.LongN == 0 || g.ShortN == 0 {
		return nil
	}
	l, sh := float64(g.LongN), float64(g.ShortN)
	g.Measured = long[0]/l - short[0]/sh
	g.Simulated = long[1]/l - short[1]/sh
	return &g
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
