package sweep

import (
	"bytes"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/stcsim/stcsim/configs"
)

// The section encoder's text is yaml.Marshal's, byte for byte, over the
// built-in configs and overrides of every kind of value (scalars,
// lists, list elements of structs, strings YAML would read as another
// type), encoded one after another so that unchanged sections are
// reused and changed ones re-encoded.
func TestSectionEncoderIsMarshal(t *testing.T) {
	sets := [][]string{nil,
		{"gpu.sm_count=54"},
		{"dram.bandwidth_gbps=1000", "name='x: y'"},
		{"description=true", "name='123'"},
		{"kernel.split_k=[1, 2, 4]", "kernel.candidates[0].bm=64"},
		{"kernel.force=128x128x64_64x64_s3", "sim.memory_granularity=detailed"},
		{"shared_memory.carveout_options_kb=[0, 164]", "shared_memory.carveout_kb=164"},
		{"l2.efficiency=0.5", "sim.seed=18446744073709551615"},
		nil,
	}
	enc := newSectionEncoder()
	n := 0
	for _, name := range configs.Builtin() {
		for _, s := range sets {
			ld, err := configs.Load([]string{name}, s)
			if err != nil {
				t.Fatalf("%s %v: %v", name, s, err)
			}
			want, err := yaml.Marshal(ld.Config)
			if err != nil {
				t.Fatal(err)
			}
			got, err := enc.marshal(ld.Config)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %v: the spliced YAML differs from yaml.Marshal's:\n%s\n---\n%s",
					name, s, got, want)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("nothing encoded")
	}
}
