package validation

import (
	"fmt"
	"sort"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/field"
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
	Kind   string `json:"kind"`   // peak, latency, bandwidth, launch, gemm_dense_time, gemm_sparse_time, gemm_speedup
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
	// k-steps, sim.Prepared.Work) of each GEMM row and of all of them:
	// Run refuses the points before anything is simulated.
	MaxWork float64
}

// DefaultCalibrated are the rows of a100-public.csv whose values set a
// config parameter (see docs/calibration.md), each controlled (Point.
// Controlled): the memory and launch microbenchmarks and gemm-16384's
// sparse time (locked at 1410 MHz; its dense time, clock not stated, is
// held out).
// An id alone names every mode of its row, ID:MODE one. Every other row
// is held out.
var DefaultCalibrated = []string{"bw-dram", "bw-dram-40gb", "bw-dram-write",
	"bw-dram-write-40gb", "bw-dram-copy-40gb", "bw-l2", "bw-l2-stream-store", "lat-l1",
	"lat-l2-near", "lat-l2-far", "lat-dram", "bw-l1", "gemm-16384:sparse",
	// the launch gap (sm.kernel_launch_latency): RRZE gpu-small-kernels' smallest size.
	"launch-small",
	// ga102-public.csv: the RRZE gpu-benches A40 (GA102) microbenchmarks.
	"launch-small-a40",
	"bw-dram-a40", "bw-dram-write-a40", "bw-dram-copy-a40", "bw-l2-a40", "bw-l1-a40", "lat-l1-a40", "lat-l2-near-a40", "lat-dram-a40"}

// ConditionModes are the values of Options.Conditions.
var ConditionModes = []string{"both", "measured", "boost"}

// Run validates every point it understands.
func Run(points []Point, opt Options) (*Report, error) {
	v := &validator{opt: opt, loaded: map[string]*configs.Loaded{},
		calibrated: map[string]bool{}}
	switch opt.Conditions {
	case "", "both", "measured", "boost":
	default:
		return nil, fmt.Errorf("conditions %s: want both, measured or boost", configs.Quote(opt.Conditions))
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
				"for hardware %s", p.ID, configs.Quote(p.Hardware)))
			continue
		}
		switch p.Kind {
		case "peak":
			err = v.peak(p, ld)
		case "latency", "bandwidth":
			err = v.memory(p, name, ld)
		case "launch":
			err = v.launch(p, ld)
		case "gemm":
			gemmPts = append(gemmPts, p)
		case "mma":
			v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: an mma row "+
				"needs a microbenchmark of one instruction shape at given warps "+
				"per SM and MMAs in flight, which stcsim micro tc does not run", p.ID))
		default:
			v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: unknown "+
				"kind %s", p.ID, configs.Quote(p.Kind)))
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
		prep, err := sim.Prepare(ld.Config, job)
		if err != nil {
			continue // Run reports it
		}
		w := prep.Work()
		if w > v.opt.MaxWork {
			return field.Errorf("row %s (line %d): estimated work %s is above "+
				"%s %.3g; drop the row or raise %s", p.ID, p.Line,
				sim.DescribeWork(w), FieldMaxWork, v.opt.MaxWork, FieldMaxWork)
		}
		total += w
	}
	if total > v.opt.MaxWork {
		return field.Errorf("the GEMM rows' estimated work %s is above %s "+
			"%.3g; run a subset (%s, %s) or raise %s",
			sim.DescribeWork(total), FieldMaxWork, v.opt.MaxWork, FieldRows, FieldKinds, FieldMaxWork)
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
	memCache   map[string]memFigure
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
	if p.M > 0 {
		return v.l2StreamAt(p, level, ld)
	}
	if level == "l2_all" {
		c := ld.Config
		r, err := memory.MicroChase(c.Memory, clock.MHz(c.GPU.ClockMHz), c.GPU.SMCount,
			c.SM.CTALaunchLatency, uint64(p.N)*1024)
		if err != nil {
			return fmt.Errorf("%s: %w", p.ID, err)
		}
		v.add(p, p.Kind, r.Unit, p.Dense, r.Value, ld, "")
		return nil
	}
	// Each row runs only its own microbenchmark (memory.MicroFigure),
	// once per config.
	key := name + "/" + p.Kind + "/" + level
	if v.memCache == nil {
		v.memCache = map[string]memFigure{}
	}
	f, ok := v.memCache[key]
	if !ok {
		c := ld.Config
		r, found, err := memory.MicroFigure(c.Memory, clock.MHz(c.GPU.ClockMHz), c.GPU.SMCount,
			c.SM.CTALaunchLatency, p.Kind, level)
		if err != nil {
			return err
		}
		f = memFigure{r, found}
		v.memCache[key] = f
	}
	if f.found {
		v.add(p, p.Kind, f.r.Unit, p.Dense, f.r.Value, ld, "")
		return nil
	}
	v.rep.Skipped = append(v.rep.Skipped, fmt.Sprintf("%s: the memory "+
		"microbenchmark has no %s %s figure", p.ID, level, p.Kind))
	return nil
}

// l2StreamAt runs a gpu-l2-stream row at its own shape (threads per CTA
// m, CTAs per SM k, a buffer of n doubles; Point.checkStreamShape).
func (v *validator) l2StreamAt(p Point, level string, ld *configs.Loaded) error {
	c := ld.Config
	r, err := memory.MicroL2Stream(c.Memory, clock.MHz(c.GPU.ClockMHz), c.GPU.SMCount,
		c.SM.CTALaunchLatency, level == "l2_stream_store",
		memory.L2StreamShape{Threads: p.M, PerSM: p.K, Length: uint64(p.N)})
	if err != nil {
		return fmt.Errorf("%s: %w", p.ID, err)
	}
	v.add(p, p.Kind, r.Unit, p.Dense, r.Value, ld, "")
	return nil
}

// launch compares the time per call of a loop of back-to-back launches
// of a tiny streaming kernel over N doubles in CTAs of M threads (RRZE
// gpu-small-kernels) with
// the model's: the launch gap (sm.kernel_launch_latency) plus the kernel
// run on the instruction-level GPU (sim.MicroLaunch).
func (v *validator) launch(p Point, ld *configs.Loaded) error {
	r, err := sim.MicroLaunch(ld.Config, p.N, p.M)
	if err != nil {
		return err
	}
	v.add(p, "launch", "us", p.Dense, r.PerCallUS, ld, "")
	return nil
}

// memFigure is a memory microbenchmark's figure, and whether it has one.
type memFigure struct {
	r     memory.MicroResult
	found bool
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
