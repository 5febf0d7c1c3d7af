package area

import (
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/check"
	"github.com/stcsim/stcsim/tensorcore"
)

// Config is the area section: the 7 nm area of each component kind and
// the geometry and wire and register energies the datapath is laid out
// with. Areas are in square micrometres (um2) unless the key says mm2.
type Config struct {
	// Multiplier is the area of one multiplier, per input precision.
	Multiplier energy.PerPrecision `yaml:"multiplier_um2"`
	// AdderPerProduct is the dot product's adder tree per product it sums.
	AdderPerProduct float64 `yaml:"adder_tree_um2_per_product"`
	// AccumulatorAdder is one FP32 adder of the accumulation stage.
	AccumulatorAdder float64 `yaml:"accumulator_adder_um2"`
	// RegisterBit is one flip-flop (a pipeline or staging register bit).
	RegisterBit float64 `yaml:"register_bit_um2"`
	// Mux2Bit is one bit of a 2:1 multiplexer.
	Mux2Bit float64 `yaml:"mux2_bit_um2"`
	// SRAMBit is one SRAM bit cell; SRAMEfficiency the share of an
	// array's area that is bit cells (the rest: decoders, sense amps).
	SRAMBit        float64 `yaml:"sram_bit_um2"`
	SRAMEfficiency float64 `yaml:"sram_array_efficiency"`
	// WirePitch is the track pitch of an operand wire.
	WirePitch float64 `yaml:"wire_pitch_um"`
	// OperandPathMM is the distance from the register file's operand
	// collector to the tensor core's edge; a path then crosses half the
	// tensor core to reach the middle of its array.
	OperandPathMM float64 `yaml:"operand_path_mm"`
	// WirePJ is the energy of moving one bit one millimetre.
	WirePJ float64 `yaml:"wire_pj_per_bit_mm"`
	// RegisterPJ is one flip-flop's energy per clocked cycle.
	RegisterPJ float64 `yaml:"register_pj_per_bit"`
	// SMOtherMM2 is the rest of an SM: FP32/INT32/FP64 pipes, special
	// functions, load/store and texture units, L0/L1 instruction caches,
	// schedulers, L1 tags.
	SMOtherMM2 float64 `yaml:"sm_other_mm2"`
	// DisabledSMs are SMs on the die that the product fuses off (they
	// take area, not work).
	DisabledSMs int `yaml:"disabled_sms"`
	// UncoreMM2 is the die outside the SMs: L2, crossbar, memory
	// controllers and PHYs, NVLink, PCIe, the command front end.
	UncoreMM2 float64 `yaml:"uncore_mm2"`
}

// Validate checks the section; paths are relative to it.
func (c Config) Validate() check.List {
	var l check.List
	for _, p := range tensorcore.Precisions {
		v, _ := c.Multiplier.Get(p)
		l.PositiveF("multiplier_um2."+p.String(), v)
	}
	for _, v := range []struct {
		k string
		v float64
	}{{"adder_tree_um2_per_product", c.AdderPerProduct},
		{"accumulator_adder_um2", c.AccumulatorAdder},
		{"register_bit_um2", c.RegisterBit}, {"mux2_bit_um2", c.Mux2Bit},
		{"sram_bit_um2", c.SRAMBit}, {"wire_pitch_um", c.WirePitch}} {
		l.PositiveF(v.k, v.v)
	}
	if c.SRAMEfficiency <= 0 || c.SRAMEfficiency > 1 {
		l.Add("sram_array_efficiency", "must be in (0, 1] (got %g)", c.SRAMEfficiency)
	}
	for _, v := range []struct {
		k string
		v float64
	}{{"operand_path_mm", c.OperandPathMM}, {"wire_pj_per_bit_mm", c.WirePJ},
		{"register_pj_per_bit", c.RegisterPJ}, {"sm_other_mm2", c.SMOtherMM2},
		{"uncore_mm2", c.UncoreMM2}} {
		if v.v < 0 {
			l.Add(v.k, "must be >= 0 (got %g)", v.v)
		}
	}
	l.NonNegative("disabled_sms", c.DisabledSMs)
	return l
}
