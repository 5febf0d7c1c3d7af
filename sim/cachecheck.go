package sim

import (
	"errors"
	"fmt"
)

// consistent says whether a record read from the cache is one the
// simulation of job j could have made: it is of j's shape, operands and
// mode (the key's), and its derived fields agree with what they are
// derived from (LayerResult.CheckDerived: the time with the cycles and the
// clock, the throughput with the shape and the time, the bandwidth with
// the bytes and the time). A record that fails is refused, never served:
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
	case rec.ClockMHz != e.Power.ClockMHz:
		return fmt.Errorf("clock %d MHz (its power inputs say %d)", rec.ClockMHz, e.Power.ClockMHz)
	}
	return rec.CheckDerived()
}
