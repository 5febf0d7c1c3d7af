package configs

import (
	"strings"
	"testing"
)

// Fidelity settings off their defaults are named; hardware keys and the
// defaults themselves are not.
func TestFidelityChanges(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want []string
	}{
		{nil, nil},
		{[]string{"gpu.sm_count=4", "l2.size_kb=20480"}, nil},
		{[]string{"kernel.simulated_candidates=1"}, []string{"kernel.simulated_candidates=1 (default 3)"}},
		{[]string{"sim.fast_forward=false", "sim.jitter_runs=3"},
			[]string{"sim.fast_forward=false (default true)", "sim.jitter_runs=3 (default 1)"}},
	} {
		ld, err := Load(nil, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FidelityChanges(ld.Config)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
			t.Errorf("%v: %q, want %q", c.sets, got, c.want)
		}
	}
}
