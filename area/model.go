package area

import (
	"fmt"
	"math"
	"strings"

	"github.com/stcsim/stcsim/tensorcore"
)

// Inputs are the parts of a GPU config the area model lays out: the
// tensor-core datapath description and the SM's register file, shared
// memory and SM count.
type Inputs struct {
	TC            tensorcore.Config
	SubPartitions int
	// Registers is the SM's 32-bit registers; RFBytesPerClk and RFBanks
	// one sub-partition's register-file read width and banks.
	Registers, RFBytesPerClk, RFBanks int
	// L1KB is the unified L1 / shared-memory SRAM of an SM.
	L1KB int
	// SmemBanks x SmemBankBytes is the bank array's width; SmemPorts its
	// ports per bank.
	SmemBanks, SmemBankBytes, SmemPorts int
	// SMs is the enabled SMs (gpu.sm_count).
	SMs int
}

// Scopes of a component: one instance per sub-partition tensor core, per
// SM, or per GPU.
const (
	ScopeTC  = "tensor core"
	ScopeSM  = "SM"
	ScopeGPU = "GPU"
)

// Component is one part of the layout: its area for one instance of its
// scope, how it is counted, and the config keys its figure comes from
// (their line comments in the config name the sources).
type Component struct {
	Name  string  `json:"name"`
	Scope string  `json:"scope"`
	Count string  `json:"count"`
	MM2   float64 `json:"mm2"`
	// Keys are the area keys of its unit figures; Drivers the keys of
	// other sections that size it.
	Keys    []string `json:"keys"`
	Drivers []string `json:"drivers"`
}

// Breakdown is a GPU's area: every component, and the tensor core, SM and
// GPU totals.
type Breakdown struct {
	Components []Component `json:"components"`
	TCMM2      float64     `json:"tensor_core_mm2"`
	// SparseMM2 is the part of a tensor core only the sparse mode needs:
	// the selector muxes, the metadata path and decode, and the B path's
	// width beyond what the dense instruction uses.
	SparseMM2 float64 `json:"sparse_datapath_mm2"`
	SMMM2     float64 `json:"sm_mm2"`
	GPUMM2    float64 `json:"gpu_mm2"`
	// PathMM is the length of an operand path: operand_path_mm plus half
	// the side of the tensor core's array.
	PathMM float64 `json:"operand_path_mm"`
}

const um2PerMM2 = 1e6

// maxOver is the largest of f over the precisions: one datapath serves
// every precision, so each component is as large as the precision that
// needs the most of it.
func maxOver(tc *tensorcore.Config, f func(p tensorcore.Precision, c *tensorcore.PrecisionConfig) float64) float64 {
	m := 0.0
	for _, p := range tensorcore.Precisions {
		c, _ := tc.Get(p)
		m = math.Max(m, f(p, c))
	}
	return m
}

func bits(p tensorcore.Precision) float64 { return float64(8 * p.ElementBytes()) }

// Model lays out the GPU of in with the unit figures of c.
func Model(c Config, in Inputs) (Breakdown, error) {
	tc := &in.TC
	var b Breakdown
	add := func(name, scope, count string, um2 float64, keys, drivers []string) {
		b.Components = append(b.Components, Component{Name: name, Scope: scope,
			Count: count, MM2: um2 / um2PerMM2, Keys: keys, Drivers: drivers})
	}
	mults := maxOver(tc, func(_ tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		return float64(p.Multipliers)
	})
	mulArea := maxOver(tc, func(n tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		unit, _ := c.Multiplier.Get(n)
		return float64(p.Multipliers) * unit
	})
	// A selector per multiplier picks one of fan-in B elements: fan-in - 1
	// 2:1 mux bits per bit of the element.
	muxBits := maxOver(tc, func(n tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		return float64(p.Multipliers) * bits(n) * float64(p.SelectorFanIn-1)
	})
	// A hierarchical pattern's block muxes (docs/tensorcore.md) deliver
	// only the kept blocks' B rows: an M1:1 mux per bit of the B path.
	blockBits := maxOver(tc, func(_ tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		return float64(8*p.BOperandBytesPerClk) * float64(p.Pattern().BlockFanIn()-1)
	})
	muxBits += blockBits
	accAdders := maxOver(tc, func(_ tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		return float64(p.AccumulatePerClk)
	})
	accBits, err := accumulatorBits(tc)
	if err != nil {
		return Breakdown{}, err
	}
	core := mulArea + mults*c.AdderPerProduct + muxBits*c.Mux2Bit +
		accAdders*c.AccumulatorAdder + accBits*c.RegisterBit
	b.PathMM = c.OperandPathMM + math.Sqrt(core)/2/1000
	// A path: its bits cross PathMM of wire at wire_pitch_um and are
	// launched and captured by a register at each end.
	path := func(bytes float64) float64 {
		return 8 * bytes * (c.WirePitch*b.PathMM*1000 + 2*c.RegisterBit)
	}
	width := func(f func(p *tensorcore.PrecisionConfig) int) float64 {
		return maxOver(tc, func(_ tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 { return float64(f(p)) })
	}
	aBytes := width(func(p *tensorcore.PrecisionConfig) int { return p.AOperandBytesPerClk })
	bBytes := width(func(p *tensorcore.PrecisionConfig) int { return p.BOperandBytesPerClk })
	metaBits := width(func(p *tensorcore.PrecisionConfig) int { return p.MetadataBitsPerClk })
	// Each index field of log2(fan-in) bits decodes into fan-in select
	// lines: fan-in / log2(fan-in) gates per metadata bit, counted as mux
	// bits.
	decode := maxOver(tc, func(_ tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		return float64(p.SelectorFanIn) / float64(tensorcore.MuxLevels(p.SelectorFanIn))
	})
	metaArea := metaBits * (c.WirePitch*b.PathMM*1000 + 2*c.RegisterBit + decode*c.Mux2Bit)
	tcKeys := func(k ...string) []string {
		out := make([]string, len(k))
		for i, s := range k {
			out[i] = "tensorcore.*." + s
		}
		return out
	}
	add("multipliers", ScopeTC, perPrecision(tc, func(p *tensorcore.PrecisionConfig) int { return p.Multipliers }), mulArea,
		[]string{"area.multiplier_um2"}, tcKeys("multipliers"))
	add("adder tree", ScopeTC, fmt.Sprintf("%.0f products", mults), mults*c.AdderPerProduct,
		[]string{"area.adder_tree_um2_per_product"}, tcKeys("multipliers"))
	add("A operand path", ScopeTC, fmt.Sprintf("%.0f B x %.3f mm", aBytes, b.PathMM), path(aBytes),
		[]string{"area.wire_pitch_um", "area.operand_path_mm", "area.register_bit_um2",
			"area.wire_pj_per_bit_mm", "area.register_pj_per_bit"},
		tcKeys("a_operand_bytes_per_clk"))
	add("B operand path", ScopeTC, fmt.Sprintf("%.0f B x %.3f mm", bBytes, b.PathMM), path(bBytes),
		[]string{"area.wire_pitch_um", "area.operand_path_mm", "area.register_bit_um2",
			"area.wire_pj_per_bit_mm", "area.register_pj_per_bit"},
		tcKeys("b_operand_bytes_per_clk"))
	add("selector muxes", ScopeTC, fmt.Sprintf("%.0f 2:1 mux bits", muxBits-blockBits), (muxBits-blockBits)*c.Mux2Bit,
		[]string{"area.mux2_bit_um2"}, tcKeys("selector_fan_in", "multipliers"))
	if blockBits > 0 {
		add("block muxes", ScopeTC, fmt.Sprintf("%.0f 2:1 mux bits", blockBits), blockBits*c.Mux2Bit,
			[]string{"area.mux2_bit_um2"}, tcKeys("sparse_pattern", "b_operand_bytes_per_clk"))
	}
	add("metadata path and decode", ScopeTC, fmt.Sprintf("%.0f bits x %.3f mm", metaBits, b.PathMM), metaArea,
		[]string{"area.wire_pitch_um", "area.register_bit_um2", "area.mux2_bit_um2",
			"area.wire_pj_per_bit_mm", "area.register_pj_per_bit"},
		tcKeys("metadata_bits_per_clk", "selector_fan_in"))
	add("accumulators", ScopeTC, fmt.Sprintf("%.0f FP32 adders, %.0f register bits", accAdders, accBits),
		accAdders*c.AccumulatorAdder+accBits*c.RegisterBit,
		[]string{"area.accumulator_adder_um2", "area.register_bit_um2"},
		append(tcKeys("accumulate_per_clk"), "tensorcore.*.dense_shape"))
	for _, k := range b.Components {
		b.TCMM2 += k.MM2
	}
	denseB := maxOver(tc, func(n tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
		return math.Min(float64(p.BOperandBytesPerClk), denseBPerClk(n, p))
	})
	b.SparseMM2 = (muxBits*c.Mux2Bit + metaArea + path(bBytes) - path(denseB)) / um2PerMM2
	b.smComponents(c, in, add)
	for _, k := range b.Components {
		if k.Scope == ScopeSM {
			b.SMMM2 += k.MM2
		}
	}
	add("SMs on the die", ScopeGPU, fmt.Sprintf("%d enabled + %d disabled", in.SMs, c.DisabledSMs),
		float64(in.SMs+c.DisabledSMs)*b.SMMM2*um2PerMM2, []string{"area.disabled_sms"},
		[]string{"gpu.sm_count"})
	add("uncore", ScopeGPU, "1", c.UncoreMM2*um2PerMM2, []string{"area.uncore_mm2"}, nil)
	for _, k := range b.Components {
		if k.Scope == ScopeGPU {
			b.GPUMM2 += k.MM2
		}
	}
	return b, nil
}

// smComponents adds the SM's register file, shared memory and the rest.
func (b *Breakdown) smComponents(c Config, in Inputs, add func(string, string, string, float64, []string, []string)) {
	sram := func(bitCount float64) float64 { return bitCount * c.SRAMBit / c.SRAMEfficiency }
	rfBits := float64(in.Registers) * 32
	add("tensor cores", ScopeSM, fmt.Sprintf("%d", in.SubPartitions),
		float64(in.SubPartitions)*b.TCMM2*um2PerMM2, nil, []string{"sm.sub_partitions"})
	add("register file", ScopeSM, fmt.Sprintf("%.0f KB", rfBits/8/1024), sram(rfBits),
		[]string{"area.sram_bit_um2", "area.sram_array_efficiency"}, []string{"sm.registers"})
	// A read port bit: a collector register and a bank-select mux.
	portBits := float64(in.SubPartitions*in.RFBytesPerClk) * 8
	add("register-file ports", ScopeSM, fmt.Sprintf("%.0f bits over %d banks", portBits, in.RFBanks),
		portBits*(c.RegisterBit+float64(in.RFBanks-1)*c.Mux2Bit),
		[]string{"area.register_bit_um2", "area.mux2_bit_um2"},
		[]string{"sm.sub_partitions", "sm.register_file_bytes_per_clk", "sm.register_file_banks"})
	l1Bits := float64(in.L1KB) * 1024 * 8
	add("L1 / shared-memory SRAM", ScopeSM, fmt.Sprintf("%d KB", in.L1KB), sram(l1Bits),
		[]string{"area.sram_bit_um2", "area.sram_array_efficiency"}, []string{"l1.total_kb"})
	// Each port of each bank: a data register and the bank crossbar's
	// banks-input mux per bit.
	bankBits := float64(in.SmemBanks*in.SmemBankBytes*in.SmemPorts) * 8
	add("shared-memory banks and ports", ScopeSM,
		fmt.Sprintf("%d banks x %d B x %d ports", in.SmemBanks, in.SmemBankBytes, in.SmemPorts),
		bankBits*(c.RegisterBit+float64(in.SmemBanks-1)*c.Mux2Bit),
		[]string{"area.register_bit_um2", "area.mux2_bit_um2"},
		[]string{"shared_memory.banks", "shared_memory.bank_bytes", "shared_memory.ports"})
	add("rest of the SM", ScopeSM, "1", c.SMOtherMM2*um2PerMM2, []string{"area.sm_other_mm2"}, nil)
}

// perPrecision is "fp16 256, bf16 256, ..." of a count.
func perPrecision(tc *tensorcore.Config, f func(p *tensorcore.PrecisionConfig) int) string {
	var parts []string
	for _, n := range tensorcore.Precisions {
		p, _ := tc.Get(n)
		parts = append(parts, fmt.Sprintf("%s %d", n, f(p)))
	}
	return strings.Join(parts, ", ")
}

// denseBPerClk is the B bytes per cycle the dense instruction needs to
// issue at its multipliers' rate: the part of the B path a dense-only
// tensor core would have.
func denseBPerClk(n tensorcore.Precision, p *tensorcore.PrecisionConfig) float64 {
	sh, err := tensorcore.ParseShape(p.DenseShape)
	if err != nil {
		return 0
	}
	cycles := math.Ceil(float64(sh.FMAs()) / float64(p.Multipliers))
	return math.Ceil(float64(sh.K*sh.N*n.ElementBytes()) / cycles)
}

// accumulatorBits are the FP32 accumulator registers of the largest m x n
// instruction tile.
func accumulatorBits(tc *tensorcore.Config) (float64, error) {
	m := 0.0
	for _, p := range tensorcore.Precisions {
		c, _ := tc.Get(p)
		sh, err := tensorcore.ParseShape(c.DenseShape)
		if err != nil {
			return 0, fmt.Errorf("tensorcore.%s.dense_shape: %w", p, err)
		}
		m = math.Max(m, float64(sh.M*sh.N*32))
	}
	return m, nil
}

// Change is "+4.2 %" of v against base.
func Change(v, base float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f %%", 100*(v/base-1))
}
