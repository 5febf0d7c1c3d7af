package kernel

import (
	"reflect"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory/memcfg"
	"github.com/stcsim/stcsim/tensorcore"
)

// A plan's shared-memory patterns from the memo are the ones computed
// for it afresh, over every library tile, precision, mode, layout and
// several shared-memory and fill geometries: a key that left out
// something the patterns read would hand one geometry's patterns to
// another.
func TestPatternMemoMatchesFreshPatterns(t *testing.T) {
	geometries := [][]string{nil,
		{"shared_memory.banks=16", "shared_memory.bytes_per_clk=64"},
		{"shared_memory.bank_bytes=8"},
		{"shared_memory.ports=2", "shared_memory.bytes_per_clk=256"},
		{"shared_memory.fill_packing=true"},
		{"crossbar.port_bytes_per_clk=32"},
	}
	checked := 0
	// Each geometry twice: the second pass is served from the memo and
	// compared with the first pass's fresh patterns (a pure function of
	// the plan and the memory config, computed once).
	type freshKey struct {
		geometry int
		tile     string
		g        Shape
	}
	freshOf := map[freshKey]smemPatterns{}
	for pass := 0; pass < 2; pass++ {
		for gi, sets := range geometries {
			ld, err := configs.Load(nil, sets)
			if err != nil {
				t.Fatal(err)
			}
			cfg := ld.Config
			for _, tile := range cfg.Kernel.Candidates {
				for _, prec := range []tensorcore.Precision{tensorcore.FP16, tensorcore.TF32, tensorcore.INT8} {
					for _, sparse := range []bool{false, true} {
						for _, lay := range []Layout{{}, {ColumnA: true}, {RowB: true}, {ColumnA: true, RowB: true}} {
							g := Shape{M: 1024, N: 1024, K: 1024, Batch: 1,
								Precision: prec, Sparse: sparse, Layout: lay}
							p, err := New(cfg, g, tile, 1)
							if err != nil {
								continue
							}
							key := freshKey{gi, tile.Name(), g}
							want, ok := freshOf[key]
							if !ok {
								fresh := *p
								fresh.computePatterns(cfg.Memory)
								want = fresh.patterns()
								freshOf[key] = want
							}
							if !reflect.DeepEqual(p.patterns(), want) {
								t.Errorf("%v %s %v: memo %+v, fresh %+v", sets, tile.Name(), g,
									p.patterns(), want)
							}
							checked++
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no plan checked")
	}
}

// The memo's key holds every scalar field of the shared-memory config:
// a field added there must be added to the key (or shown not to change
// the patterns, and added to the list below).
func TestPatternKeyCoversSharedMemory(t *testing.T) {
	inKey := map[string]bool{"CarveoutKB": true, "Banks": true, "BankBytes": true,
		"Ports": true, "BytesPerClk": true, "Latency": true,
		"FillArbitration": true, "FillPacking": true,
		// The carve-out options only validate carveout_kb.
		"CarveoutOptionsKB": true}
	ty := reflect.TypeOf(memcfg.SharedMemoryConfig{})
	for i := range ty.NumField() {
		if f := ty.Field(i); !inKey[f.Name] {
			t.Errorf("shared_memory field %s is not in the pattern memo's key", f.Name)
		}
	}
}
