package area

import (
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/tensorcore"
)

// MMAPaths is, for every precision's dense and sparse datapath (sparse at
// the precision's sparse_pattern; dual-side when tensorcore.dual_side is
// set), what one MMA spends on its way through the layout of b: its A and
// B bytes and its metadata bits over b.PathMM of wire at wire_pj_per_bit_mm,
// the launch and capture registers of each path (width x 2) clocked for
// the instruction's issue interval at register_pj_per_bit, and its
// selections x passes x mux levels.
func MMAPaths(c Config, tc *tensorcore.Config, b Breakdown) (energy.Paths, error) {
	out := energy.Paths{}
	sparse := tensorcore.Sparse
	if tc.DualSide {
		sparse = tensorcore.DualSide
	}
	for _, n := range tensorcore.Precisions {
		p, _ := tc.Get(n)
		pat := p.Pattern()
		for _, m := range []tensorcore.Mode{tensorcore.Dense, sparse} {
			d, err := tensorcore.Derive(p, n, m, pat, 0)
			if err != nil {
				return nil, err
			}
			mode := m
			if m == tensorcore.DualSide {
				mode = tensorcore.Sparse // the energy model counts it as sparse
			}
			out[energy.PathKey{Precision: n, Mode: mode}] = c.mmaPath(p, d, b.PathMM)
		}
	}
	return out, nil
}

func (c Config) mmaPath(p *tensorcore.PrecisionConfig, d tensorcore.Datapath, mm float64) energy.MMAPath {
	demand := map[string]float64{}
	for _, k := range d.Constraints {
		demand[k.Key] = float64(k.Demand)
	}
	wire := func(bitCount float64) float64 { return bitCount * c.WirePJ * mm }
	clocked := func(widthBits int) float64 {
		return 2 * float64(widthBits) * float64(d.Interval) * c.RegisterPJ
	}
	var e energy.MMAPath
	e.OperandPJ = wire(8*(demand["a_operand_bytes_per_clk"]+demand["b_operand_bytes_per_clk"])) +
		clocked(8*(p.AOperandBytesPerClk+p.BOperandBytesPerClk))
	if d.Mode == tensorcore.Dense {
		return e
	}
	e.MetadataPJ = wire(demand["metadata_bits_per_clk"]) + clocked(p.MetadataBitsPerClk)
	passes := d.Pattern.SelectorPasses(p.SelectorFanIn)
	e.MuxPasses = float64(d.Products * passes * tensorcore.MuxLevels(p.SelectorFanIn))
	return e
}
