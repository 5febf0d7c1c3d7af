package area_test

import (
	"testing"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/tensorcore"
)

// The hardware what-ifs of the hierarchical and transposable patterns
// (docs/tensorcore.md): their metadata width drives the datapath's
// metadata demand, and through it the interval when the metadata path
// binds, and the metadata energy of an MMA; a hierarchical pattern's
// block muxes add area, mux levels and selections. The demands are
// worked by hand for fp16 (m16n8k16 dense): 2:4 runs m16n8k32 with 16
// kept values a row, 2 index bits each: 16 x 16 x 2 = 512 bits; 2:4T
// reads each value's row and column index, 1024 bits; 2:4/2:4 runs
// m16n8k64 with 16 kept a row in 4 groups of 16, each 4 x 2 value bits
// and 2 x 2 block bits: 16 x 4 x 12 = 768 bits.
func TestPatternMetadataWidthDrives(t *testing.T) {
	for _, tc := range []struct {
		pattern    string
		metaBits   int
		interval   int // at metadata_bits_per_clk 32
		blockLevel int // block mux levels in the select stage's fill (log2 M1)
	}{
		{"2:4", 512, 16, 0},
		{"2:4T", 1024, 32, 0},
		{"2:4/2:4", 768, 24, 2},
	} {
		_, c := model(t, "tensorcore.fp16.sparse_pattern="+tc.pattern,
			"tensorcore.fp16.metadata_bits_per_clk=32")
		p, _ := c.TensorCore.Get(tensorcore.FP16)
		d, err := tensorcore.Derive(p, tensorcore.FP16, tensorcore.Sparse, p.Pattern(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var demand int
		for _, k := range d.Constraints {
			if k.Key == "metadata_bits_per_clk" {
				demand = k.Demand
			}
		}
		if demand != tc.metaBits || d.Interval != tc.interval {
			t.Errorf("%s: %d metadata bits, interval %d; want %d, %d", tc.pattern,
				demand, d.Interval, tc.metaBits, tc.interval)
		}
		sel := d.Stages[2]
		want := (tensorcore.MuxLevels(p.SelectorFanIn) + tc.blockLevel) * p.MuxLevelLatency
		if sel.Name != tensorcore.StageSelect || sel.Fill != want {
			t.Errorf("%s: select stage %+v, want fill %d", tc.pattern, sel, want)
		}
	}
	// Energy: the metadata wire energy follows the bits read (the
	// clocked registers follow the interval, which the what-if lengthens).
	pj := func(pattern string) energy.MMAPath {
		_, c := model(t, "tensorcore.fp16.sparse_pattern="+pattern)
		return c.Power.Paths[energy.PathKey{Precision: tensorcore.FP16, Mode: tensorcore.Sparse}]
	}
	base, tr, hier := pj("2:4"), pj("2:4T"), pj("2:4/2:4")
	if tr.MetadataPJ <= base.MetadataPJ || hier.MetadataPJ <= base.MetadataPJ {
		t.Errorf("metadata pJ per MMA: 2:4 %.2f, 2:4T %.2f, 2:4/2:4 %.2f: the wider metadata costs nothing",
			base.MetadataPJ, tr.MetadataPJ, hier.MetadataPJ)
	}
	// 2:4/2:4's block muxes: every B element of the 32 kept-block rows x
	// 8 columns crosses two 2:1 levels (M1 = 4), beyond the products'.
	if hier.MuxPasses != base.MuxPasses+32*8*2 {
		t.Errorf("2:4/2:4: %.0f mux passes, want %.0f", hier.MuxPasses, base.MuxPasses+32*8*2)
	}
	// Area: M1 - 1 = 3 2:1 mux bits per bit of the widest B path (64 B).
	b, c := model(t, "tensorcore.fp16.sparse_pattern=2:4/2:4")
	within(t, "block muxes", component(t, b, "block muxes"),
		64*8*3*c.Area.Mux2Bit/1e6, 1e-9)
	if plain, _ := model(t); plain.SparseMM2 >= b.SparseMM2 {
		t.Errorf("sparse-only area %.5f mm2 with block muxes, %.5f without", b.SparseMM2, plain.SparseMM2)
	}
}
