package sweep

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
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
		{"shared_memory.carveout_options_kb=[0, 100]", "shared_memory.carveout_kb=100"}, // within every built-in L1 (GA102: 128 KB)
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

// Points are planned in parallel chunks; the error is still the first in
// grid order, within a chunk and across chunks (points 35 and 50 fail
// below, 35 is named; with the first valid, the check at 3 fails before
// the config at 35), and a same-config pair across chunks is found.
func TestPlanReportsTheFirstFailingPoint(t *testing.T) {
	var vals []string
	for i := 1; i <= 60; i++ {
		v := strconv.Itoa(i)
		if i == 35 || i == 50 {
			v = "0"
		}
		vals = append(vals, v)
	}
	grid := "workloads: [{gemms: [64x64x64]}]\ngrid: {gpu.sm_count: [" + strings.Join(vals, ", ") + "]}\n"
	s, err := Parse([]byte(grid), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plan(Resolver{}); err == nil || !strings.Contains(err.Error(), "point 35 (gpu.sm_count=0)") {
		t.Errorf("error %v, want point 35's", err)
	}
	check := func(pt *Point, _ *configs.Loaded, _ []*Workload, _ []*sim.Prepared) error {
		if pt.Index == 2 {
			return errors.New("check refuses point 3")
		}
		return nil
	}
	if _, err := s.PlanChecked(Resolver{}, check); err == nil || err.Error() != "check refuses point 3" {
		t.Errorf("error %v, want point 3's check", err)
	}
	dup := "workloads: [{gemms: [64x64x64]}]\ngrid: {gpu.sm_count: [" + strings.Join(vals[:34], ", ") + ", 3]}\n"
	if s, err = Parse([]byte(dup), "x.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plan(Resolver{}); err == nil || !strings.Contains(err.Error(), "points 3 (gpu.sm_count=3) and 35") {
		t.Errorf("error %v, want points 3 and 35 the same", err)
	}
}
