package configs

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Value reads one field alone (fieldAt); it must render every key of
// every built-in config as the whole config's encoding does, list
// elements included.
func TestValueMatchesTheEncodedConfig(t *testing.T) {
	for _, name := range Builtin() {
		ld, err := Load([]string{name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var root yaml.Node
		if err := root.Encode(ld.Config); err != nil {
			t.Fatal(err)
		}
		n := 0
		var walk func(n *yaml.Node, path string)
		walk = func(node *yaml.Node, path string) {
			if path != "" {
				want, wok := ld.encodedValue(path)
				got, gok := ld.Value(path)
				if got != want || gok != wok {
					t.Errorf("%s: Value(%s) = %q, %v; the encoding gives %q, %v",
						name, path, got, gok, want, wok)
				}
				n++
			}
			switch node.Kind {
			case yaml.MappingNode:
				for i := 0; i+1 < len(node.Content); i += 2 {
					walk(node.Content[i+1], joinPath(path, node.Content[i].Value))
				}
			case yaml.SequenceNode:
				for i, c := range node.Content {
					walk(c, fmt.Sprintf("%s[%d]", path, i))
				}
			}
		}
		walk(&root, "")
		if n < 100 {
			t.Errorf("%s: only %d keys walked", name, n)
		}
		for _, bad := range []string{"gpu.nope", "base", "gpu.sm_count[0]", "kernel.candidates[999].bm", "gpu..x"} {
			if v, ok := ld.Value(bad); ok {
				t.Errorf("%s: Value(%s) = %q, want none", name, bad, v)
			}
		}
	}
}

// A loaded config decodes its merged tree directly; that must be what
// the tree's YAML text decodes to under the strict decoder (unknown
// fields refused), over the built-in configs, overlays of lists and
// --set values of every kind.
func TestTreeDecodesAsItsText(t *testing.T) {
	sets := [][]string{nil,
		{"gpu.sm_count=54", "sim.jitter_runs=3", "name=x y"},
		{"kernel.split_k=[1, 2, 4]", "kernel.candidates[0].bm=64", "l2.efficiency=0.5"},
		{"kernel.force=128x128x64_64x64_s3", "sim.memory_granularity=detailed"},
		{"tensorcore.fp16.sparse_pattern=2:4", "shared_memory.fill_packing=true"},
	}
	for _, name := range Builtin() {
		for _, s := range sets {
			ld, err := Load([]string{name}, s)
			if err != nil {
				t.Fatalf("%s %v: %v", name, s, err)
			}
			body, err := yaml.Marshal(ld.tree)
			if err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(bytes.NewReader(body))
			dec.KnownFields(true)
			want := &Config{}
			if err := dec.Decode(want); err != nil {
				t.Fatalf("%s %v: %v", name, s, err)
			}
			if errs := want.Validate(); len(errs) > 0 { // as finish does
				t.Fatal(errs)
			}
			if err := want.derivePaths(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ld.Config, want) {
				t.Errorf("%s %v: the tree decodes to another config than its text", name, s)
			}
		}
	}
}

// boundFor keeps its answers; they are findBound's for every number of
// every built-in config, asked twice (the second from the memo).
func TestBoundMemoIsFindBound(t *testing.T) {
	for _, name := range Builtin() {
		ld, err := Load([]string{name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		walkNumbers(reflect.ValueOf(*ld.Config), "", func(path string, _ float64, isInt bool) {
			for i := 0; i < 2; i++ {
				if got, want := boundFor(path, isInt), findBound(path, isInt); got != want {
					t.Errorf("%s: %s: boundFor %+v, findBound %+v", name, path, got, want)
				}
			}
			n++
		})
		if n < 100 {
			t.Errorf("%s: %d numbers walked", name, n)
		}
	}
}
