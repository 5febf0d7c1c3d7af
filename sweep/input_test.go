package sweep

import (
	"strings"
	"testing"
)

// Sweep spec edge cases of item 20 and the grid bound of item 5.
func TestSpecLimits(t *testing.T) {
	if _, err := Parse([]byte("workloads: [{gemms: [64x64x64]}]\nmodes: []\n"), "s.yaml"); err == nil ||
		!strings.Contains(err.Error(), "empty list") {
		t.Errorf("modes: []: %v", err)
	}
	var vals []string
	for i := 1; i <= 400; i++ {
		vals = append(vals, "1")
	}
	big := "workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count: [" +
		strings.Join(vals, ", ") + "]\n  sm.max_ctas: [" + strings.Join(vals, ", ") + "]\n"
	s, err := Parse([]byte(big), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plan(Resolver{}); err == nil || !strings.Contains(err.Error(), "above the limit") {
		t.Errorf("160000-point grid: %v", err)
	}
	for _, c := range []struct{ spec, want string }{
		{"workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count: [54.9]\n", "whole number"},
		{"workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count.x: [1]\n", "no keys below it"},
		{"workloads: [{gemms: [1073741824x1073741824x1073741824]}]\n", "above the limit"},
	} {
		s, err := Parse([]byte(c.spec), "s.yaml")
		if err == nil {
			_, err = s.Plan(Resolver{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.spec, err, c.want)
		}
	}
}

// The grid value stored is the value simulated (item 12).
func TestGridStoresSimulatedValue(t *testing.T) {
	p := mustPlan(t, "workloads: [{gemms: [64x64x64]}]\ngrid:\n  dram.bandwidth_gbps: [1.5e3, 2000.50]\n")
	if got := []string{p.Points[0].Grid[0].Value, p.Points[1].Grid[0].Value}; got[0] != "1500" || got[1] != "2000.5" {
		t.Errorf("stored grid values %v, want [1500 2000.5]", got)
	}
}
