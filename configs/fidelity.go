package configs

import "fmt"

// fidelityKeys are the keys that trade how much is simulated for speed;
// they change the science a run reports, not the hardware it models.
func fidelityKeys(c *Config) []struct {
	key string
	v   any
} {
	return []struct {
		key string
		v   any
	}{
		{"kernel.simulated_candidates", c.Kernel.SimulatedCandidates},
		{"sim.memory_granularity", c.Sim.MemoryGranularity},
		{"sim.extrapolate_waves", c.Sim.ExtrapolateWaves},
		{"sim.extrapolate_ksteps", c.Sim.ExtrapolateKSteps},
		{"sim.fast_forward", c.Sim.FastForward},
		{"sim.retime_probe_ksteps", c.Sim.RetimeProbeKSteps},
		{"sim.jitter_runs", c.Sim.JitterRuns},
		{"sim.prune_tolerance", c.Sim.PruneTolerance},
		{"sim.fidelity", c.Sim.Fidelity},
		{"tensorcore.fidelity", c.TensorCore.Fidelity},
	}
}

// FidelityChanges lists the fidelity settings of c that differ from the
// built-in defaults, as "key=value (default D)": a run, sweep point or
// plot made with them says so, since they change what is simulated.
func FidelityChanges(c *Config) ([]string, error) {
	def, err := Load(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("built-in default config: %w", err)
	}
	d := fidelityKeys(def.Config)
	var out []string
	for i, f := range fidelityKeys(c) {
		if f.v != d[i].v {
			out = append(out, fmt.Sprintf("%s=%v (default %v)", f.key, f.v, d[i].v))
		}
	}
	return out, nil
}
