package validation

import (
	"math"
	"strings"
	"testing"
)

// launchRows are the launch rows of the shared A100 collection.
func launchRows(t *testing.T) []Point {
	t.Helper()
	pts, err := LoadPoints("points/a100-public.csv")
	if err != nil {
		t.Fatal(err)
	}
	var out []Point
	for _, p := range pts {
		if p.Kind == "launch" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("a100-public.csv has no launch rows")
	}
	return out
}

// The loop of tiny kernels is modelled within 2 % of gpu-small-kernels'
// 2.621 us per call with the calibrated gap; without the gap
// (sm.kernel_launch_latency=0) the kernel alone is far too fast, so the
// row fails without the mechanism.
func TestLaunchRowNeedsTheGap(t *testing.T) {
	pts := launchRows(t)
	for _, c := range []struct {
		sets    []string
		lo, hi  float64
		heldOut bool
	}{
		{nil, -0.02, 0.02, false},
		{[]string{"sm.kernel_launch_latency=0"}, -1, -0.5, false},
	} {
		rep, err := Run(pts, Options{Sets: c.sets, Calibrated: DefaultCalibrated})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range rep.Rows {
			if r.ID != "launch-small" {
				continue
			}
			found = true
			if r.Kind != "launch" || r.Unit != "us" || r.HeldOut || math.IsNaN(r.Error) || r.Error < c.lo || r.Error > c.hi {
				t.Errorf("sets %v: launch-small %+v: want a calibration row with error in [%g, %g]", c.sets, r, c.lo, c.hi)
			}
		}
		if !found {
			t.Errorf("sets %v: no launch-small row (skipped %v)", c.sets, rep.Skipped)
		}
	}
}

func TestBadLaunchRows(t *testing.T) {
	const head = "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source\n"
	for name, row := range map[string]string{
		"no n":   "l,A100-80GB,,launch,,,,2.6,,us,,test\n",
		"odd n":  "l,A100-80GB,,launch,,4095,,2.6,,us,,test\n",
		"cycles": "l,A100-80GB,,launch,,4096,,2.6,,cycles,,test\n",
	} {
		_, err := ParsePoints(strings.NewReader(head+row), "launch.csv")
		if err == nil || !strings.Contains(err.Error(), "launch.csv") {
			t.Errorf("%s: want an error naming the file, got %v", name, err)
		}
	}
}
