package sim

import (
	"errors"
	"fmt"
	"math"
)

// consistent says whether a record read from the cache is one the
// simulation of job j could have made: it is of j's shape, operands and
// mode (the key's), and its derived fields agree with what they are
// derived from (record, fillTraffic): the time with the cycles and the
// clock, the throughput with the shape and the time, the bandwidth with
// the bytes and the time. A record that fails is refused, never served:
// a hand edit that keeps the entry's MAC (a cache whose secret leaked)
// must still edit every field in step to pass.
func (e cacheEntry) consistent(j layerJob) error {
	rec, g := e.Record, j.gemm
	switch {
	case rec.Mode != j.mode:
		return fmt.Errorf("a %s record under a %s key", rec.Mode, j.mode)
	case rec.M != g.M || rec.N != g.N || rec.K != g.K || rec.Batch != max(1, g.Batch):
		return fmt.Errorf("a %dx%dx%d (batch %d) record under a %dx%dx%d (batch %d) key",
			rec.M, rec.N, rec.K, rec.Batch, g.M, g.N, g.K, max(1, g.Batch))
	case rec.Precision != g.Precision || rec.Layout != g.Layout || rec.SparseApplied != j.shape.Sparse:
		return errors.New("its precision, layout or sparsity is not the key's")
	case j.shape.Sparse && rec.Pattern != j.shape.Pattern.String():
		return fmt.Errorf("pattern %.10q under a %s key", rec.Pattern, j.shape.Pattern)
	case e.Power.Act.Precision != g.Precision:
		return errors.New("its energy counts are of another precision")
	case rec.Cycles == 0 || rec.Cycles > 1<<53:
		return fmt.Errorf("%d cycles", rec.Cycles)
	case e.Power.ClockMHz <= 0 || e.Power.ClockMHz > 100000 || rec.ClockMHz != e.Power.ClockMHz:
		return fmt.Errorf("clock %d MHz (its power inputs say %d)", rec.ClockMHz, e.Power.ClockMHz)
	}
	sec := float64(rec.Cycles) / (float64(e.Power.ClockMHz) * 1e6)
	flops := 2 * float64(g.M) * float64(g.N) * float64(g.K) * float64(max(1, g.Batch))
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"time_us against cycles and clock", rec.TimeUS, sec * 1e6},
		{"tflops against the shape and time", rec.TFLOPS, flops / sec / 1e12},
		{"dram_gbps against the DRAM bytes and time", rec.DRAMGBps,
			float64(rec.DRAMReadBytes+rec.DRAMWriteBytes) / sec / 1e9},
	} {
		if !agree(f.got, f.want) {
			return fmt.Errorf("%s: %.6g, want %.6g", f.name, f.got, f.want)
		}
	}
	for _, v := range []float64{rec.TCUtilization, rec.UsefulUtilization, rec.L2HitRate, rec.CyclesMean, rec.CyclesSpread} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("a field is %v", v)
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
