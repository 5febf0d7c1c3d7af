package sim

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// The power-capped totals sum time x count per workload and mode, span
// the clocks their kernels ran at, and give the sparse total's speedup.
func TestCappedTotals(t *testing.T) {
	rec := func(layer string, m tensorcore.Mode, us float64, count, mhz int) LayerResult {
		r := LayerResult{Workload: "w", Layer: layer, Mode: m, TimeUS: us, Count: count}
		r.ClockMHz = mhz
		return r
	}
	rows := []LayerResult{
		rec("a", tensorcore.Dense, 10, 2, 1245), rec("a", tensorcore.Sparse, 8, 2, 1395),
		rec("b", tensorcore.Dense, 5, 1, 1410), rec("b", tensorcore.Sparse, 4, 1, 1410),
	}
	got := cappedTotals(rows, 400)
	if len(got) != 2 {
		t.Fatalf("got %d totals, want 2: %+v", len(got), got)
	}
	d, s := got[0], got[1]
	if d.Mode != tensorcore.Dense || d.TimeUS != 25 || d.MinClockMHz != 1245 || d.MaxClockMHz != 1410 ||
		d.Speedup != 0 || d.LimitW != 400 || d.Policy != "power_capped" {
		t.Errorf("dense total %+v", d)
	}
	if s.Mode != tensorcore.Sparse || s.TimeUS != 20 || s.MinClockMHz != 1395 || s.MaxClockMHz != 1410 ||
		math.Abs(s.Speedup-1.25) > 1e-12 {
		t.Errorf("sparse total %+v", s)
	}
}
