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
		{[]string{"sim.fidelity=fast"}, []string{"sim.fidelity=fast (default instruction)"}},
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

// sim.fidelity takes instruction (the default) or fast; anything else is
// an error that names the key and the values it takes.
func TestSimFidelityValidated(t *testing.T) {
	def, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Config.Sim.Fidelity != FidelityInstruction {
		t.Errorf("default sim.fidelity %q, want instruction", def.Config.Sim.Fidelity)
	}
	if _, err := Load(nil, []string{"sim.fidelity=fast"}); err != nil {
		t.Errorf("sim.fidelity=fast: %v", err)
	}
	for _, v := range []string{"analytical", "Fast", ""} {
		_, err := Load(nil, []string{"sim.fidelity=" + v})
		if err == nil || !strings.Contains(err.Error(), "sim.fidelity") ||
			!strings.Contains(err.Error(), "instruction, fast") {
			t.Errorf("sim.fidelity=%q: %v, want an error naming the key and its values", v, err)
		}
	}
}
