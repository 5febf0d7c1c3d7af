package energy

import (
	"fmt"
	"sort"

	"github.com/stcsim/stcsim/internal/check"
	"github.com/stcsim/stcsim/tensorcore"
)

// Config is the power section of a GPU config: the board's power limit,
// its voltage/frequency table, static power and the energy of each event
// class. Energies are at the voltage of the table's highest clock.
type Config struct {
	// LimitW is the board power limit the power_capped policy holds.
	LimitW float64 `yaml:"limit_w"`
	// VF is the voltage/frequency table, ascending in clock.
	VF []VFPoint `yaml:"vf_table"`
	// ClockStepMHz is the spacing of the clocks the board can run at.
	ClockStepMHz int `yaml:"clock_step_mhz"`
	// BoardStaticW is board power that does not depend on the SM clock or
	// voltage (memory refresh and PHY idle, regulators, links).
	BoardStaticW float64 `yaml:"board_static_w"`
	// SMLeakageW is one SM's leakage at the top voltage (scales with V).
	SMLeakageW float64 `yaml:"sm_leakage_w"`
	// SMClockPJ is one SM's clock-tree and idle pipeline energy per cycle
	// (dynamic: scales with V^2 and runs at the clock).
	SMClockPJ float64 `yaml:"sm_clock_pj_per_cycle"`
	// DataActivity is the operands' bit-toggle probability (0.5: uniformly
	// random values; 0: constant or zero operands).
	DataActivity float64 `yaml:"data_activity"`
	Events       Events  `yaml:"energy"`
	// Paths is what one MMA of each datapath moves and passes, laid out
	// from the tensorcore section by the area section (area.MMAPaths);
	// configs derives it when a config loads. Not a config key.
	Paths Paths `yaml:"-" json:"-"`
}

// PathKey names one datapath: a precision in a mode.
type PathKey struct {
	Precision tensorcore.Precision
	Mode      tensorcore.Mode
}

// Paths holds each datapath's per-instruction path energies.
type Paths map[PathKey]MMAPath

// MMAPath is one MMA instruction's way through the datapath's structure,
// beyond its products: the energy of its A and B bits over their wires
// and the staging registers clocked while it holds the operand stage, the
// same for its metadata bits, and the 2:1 mux levels its selections pass.
type MMAPath struct {
	OperandPJ  float64 `json:"operand_pj"`
	MetadataPJ float64 `json:"metadata_pj"`
	// MuxPasses is products x selector passes x mux levels.
	MuxPasses float64 `json:"mux_passes"`
}

// VFPoint is one row of the voltage/frequency table.
type VFPoint struct {
	MHz int     `yaml:"mhz"`
	MV  float64 `yaml:"mv"`
}

// Events are the energies of one event of each class, in picojoules.
type Events struct {
	// MMA is the energy of one multiply-accumulate performed, per
	// precision, with random operands (data activity 0.5).
	MMA PerPrecision `yaml:"mma_pj_per_fma"`
	// DataShare is the part of MMA that scales with the data activity.
	DataShare float64 `yaml:"mma_data_share"`
	// SparseSelect is the selector muxes' energy per selection per 2:1
	// mux level passed (a sparse MMA's multiply picks the activation its
	// kept value meets through ceil(log2 fan-in) levels, once per pass).
	SparseSelect float64 `yaml:"sparse_select_pj_per_fma" mode:"sparse"`
	// MetadataDecode is one sparse MMA's metadata decode.
	MetadataDecode float64 `yaml:"metadata_decode_pj_per_mma" mode:"sparse"`
	// FP32 is one FP32-pipe thread operation's datapath (an FFMA, FADD,
	// FMUL or conversion in one lane of a CUDA core).
	FP32          float64 `yaml:"fp32_pj_per_op"`
	RFRead        float64 `yaml:"rf_read_pj_per_byte"`
	RFWrite       float64 `yaml:"rf_write_pj_per_byte"`
	Issue         float64 `yaml:"issue_pj_per_instruction"`
	SmemWavefront float64 `yaml:"smem_pj_per_wavefront"`
	L1Sector      float64 `yaml:"l1_pj_per_sector"`
	L2Sector      float64 `yaml:"l2_pj_per_sector"`
	Crossbar      float64 `yaml:"crossbar_pj_per_byte"`
	DRAM          float64 `yaml:"dram_pj_per_byte"`
}

// PerPrecision holds one value per tensor-core precision.
type PerPrecision struct {
	FP16 float64 `yaml:"fp16"`
	BF16 float64 `yaml:"bf16"`
	TF32 float64 `yaml:"tf32"`
	INT8 float64 `yaml:"int8"`
}

// Get is the value of a precision.
func (p PerPrecision) Get(precision tensorcore.Precision) (float64, error) {
	switch precision {
	case tensorcore.FP16:
		return p.FP16, nil
	case tensorcore.BF16:
		return p.BF16, nil
	case tensorcore.TF32:
		return p.TF32, nil
	case tensorcore.INT8:
		return p.INT8, nil
	}
	return 0, fmt.Errorf("energy: no MMA energy for precision %s", precision)
}

// Validate checks the section; paths are relative to it. A clock outside
// the V/f table is allowed (a what-if): it gets the voltage of the
// table's nearest end.
func (c Config) Validate() check.List {
	var l check.List
	l.PositiveF("limit_w", c.LimitW)
	l.Positive("clock_step_mhz", c.ClockStepMHz)
	nonNegative(&l, "board_static_w", c.BoardStaticW)
	nonNegative(&l, "sm_leakage_w", c.SMLeakageW)
	nonNegative(&l, "sm_clock_pj_per_cycle", c.SMClockPJ)
	if c.DataActivity < 0 || c.DataActivity > 1 {
		l.Add("data_activity", "must be in [0, 1] (got %g)", c.DataActivity)
	}
	l = append(l, c.validateVF()...)
	l = append(l, c.Events.validate().Prefix("energy")...)
	return l
}

func (c Config) validateVF() check.List {
	var l check.List
	if len(c.VF) < 1 {
		l.Add("vf_table", "must list at least one {mhz, mv} point")
		return l
	}
	for i, p := range c.VF {
		path := fmt.Sprintf("vf_table[%d]", i)
		l.Positive(path+".mhz", p.MHz)
		l.PositiveF(path+".mv", p.MV)
		if i > 0 && (p.MHz <= c.VF[i-1].MHz || p.MV < c.VF[i-1].MV) {
			l.Add(path, "points must rise in mhz (strictly) and mv")
		}
	}
	return l
}

func (e Events) validate() check.List {
	var l check.List
	for _, p := range []struct {
		name string
		v    float64
	}{{"mma_pj_per_fma.fp16", e.MMA.FP16}, {"mma_pj_per_fma.bf16", e.MMA.BF16},
		{"mma_pj_per_fma.tf32", e.MMA.TF32}, {"mma_pj_per_fma.int8", e.MMA.INT8},
		{"sparse_select_pj_per_fma", e.SparseSelect},
		{"metadata_decode_pj_per_mma", e.MetadataDecode},
		{"fp32_pj_per_op", e.FP32},
		{"rf_read_pj_per_byte", e.RFRead}, {"rf_write_pj_per_byte", e.RFWrite},
		{"issue_pj_per_instruction", e.Issue},
		{"smem_pj_per_wavefront", e.SmemWavefront},
		{"l1_pj_per_sector", e.L1Sector}, {"l2_pj_per_sector", e.L2Sector},
		{"crossbar_pj_per_byte", e.Crossbar}, {"dram_pj_per_byte", e.DRAM}} {
		nonNegative(&l, p.name, p.v)
	}
	if e.DataShare < 0 || e.DataShare > 1 {
		l.Add("mma_data_share", "must be in [0, 1] (got %g)", e.DataShare)
	}
	return l
}

func nonNegative(l *check.List, path string, v float64) {
	if v < 0 {
		l.Add(path, "must be >= 0 (got %g)", v)
	}
}

// Volts is the table's voltage at a clock, linear between points and
// clamped to the ends.
func (c Config) Volts(mhz int) float64 {
	t := c.VF
	i := sort.Search(len(t), func(i int) bool { return t[i].MHz >= mhz })
	switch {
	case i == 0:
		return t[0].MV / 1000
	case i == len(t):
		return t[len(t)-1].MV / 1000
	}
	a, b := t[i-1], t[i]
	f := float64(mhz-a.MHz) / float64(b.MHz-a.MHz)
	return (a.MV + f*(b.MV-a.MV)) / 1000
}

// topVolts is the voltage the event energies are given at.
func (c Config) topVolts() float64 { return c.VF[len(c.VF)-1].MV / 1000 }

// Clocks are the clocks a power-capped board may run a kernel at, highest
// first: maxMHz and every clock_step_mhz below it down to the table's
// lowest clock.
func (c Config) Clocks(maxMHz int) []int {
	var out []int
	for f := maxMHz; f >= c.VF[0].MHz; f -= c.ClockStepMHz {
		out = append(out, f)
	}
	return out
}
