package results

import (
	"errors"
	"fmt"
	"math"

	"github.com/stcsim/stcsim/workloads"
)

// CheckDerived says whether a record's derived fields agree with what a
// simulation derives them from (sim/records.go): its time with its
// cycles and clock, its throughput with its shape and time (0 for a
// kernel of a step that does no GEMM), its DRAM bandwidth with its bytes
// and time, and its rates finite and not negative. The simulation cache
// and the results store both refuse a record that fails: a hand edit has
// to change every field in step to pass.
func (r LayerResult) CheckDerived() error {
	switch {
	case r.Cycles == 0 || r.Cycles > 1<<53:
		return fmt.Errorf("%d cycles", r.Cycles)
	case r.ClockMHz <= 0 || r.ClockMHz > 100000:
		return fmt.Errorf("clock %d MHz", r.ClockMHz)
	}
	sec := float64(r.Cycles) / (float64(r.ClockMHz) * 1e6)
	tflops := r.FLOPs() / sec / 1e12
	if r.Pass == workloads.RoleOverhead {
		tflops = 0
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"time_us against cycles and clock", r.TimeUS, sec * 1e6},
		{"tflops against the shape and time", r.TFLOPS, tflops},
		{"dram_gbps against the DRAM bytes and time", r.DRAMGBps,
			float64(r.DRAMReadBytes+r.DRAMWriteBytes) / sec / 1e9},
	} {
		if !agree(f.got, f.want) {
			return fmt.Errorf("%s: %.6g, want %.6g", f.name, f.got, f.want)
		}
	}
	for _, v := range []float64{r.TCUtilization, r.UsefulUtilization, r.L2HitRate, r.CyclesMean, r.CyclesSpread,
		r.EnergyUJ, r.AvgPowerW, r.Speedup} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return errors.New("a rate or energy is " + fmt.Sprint(v))
		}
	}
	return nil
}

// agree reports whether a stored float is the one recomputed (to 1e-12,
// relative: JSON keeps a float64 exactly, the margin is for the order of
// operations).
func agree(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(math.Abs(want), 1e-300)
}
