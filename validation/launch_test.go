package validation

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// launchRows are the launch rows of the A100 and GA102 collections.
func launchRows(t *testing.T) []Point {
	t.Helper()
	var out []Point
	for _, f := range []string{"points/a100-public.csv", "points/ga102-public.csv"} {
		pts, err := LoadPoints(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			if p.Kind == "launch" {
				out = append(out, p)
			}
		}
	}
	return out
}

// calibratedLaunch are the launch rows that set sm.kernel_launch_latency.
var calibratedLaunch = []string{"launch-small", "launch-small-a40"}

// The loop of tiny kernels is modelled within 2 % of gpu-small-kernels'
// time per call (A100: 2.621 us, A40: 2.260 us) with the calibrated gap;
// without the gap (sm.kernel_launch_latency=0) the kernel alone is far
// too fast, so the rows fail without the mechanism.
func TestLaunchRowNeedsTheGap(t *testing.T) {
	pts := launchRows(t)
	for _, c := range []struct {
		sets   []string
		lo, hi float64
	}{
		{nil, -0.02, 0.02},
		{[]string{"sm.kernel_launch_latency=0"}, -1, -0.5},
	} {
		rep, err := Run(pts, Options{Sets: c.sets, Calibrated: DefaultCalibrated})
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, r := range rep.Rows {
			if !slices.Contains(calibratedLaunch, r.ID) {
				continue
			}
			found++
			if r.Kind != "launch" || r.Unit != "us" || r.HeldOut || math.IsNaN(r.Error) || r.Error < c.lo || r.Error > c.hi {
				t.Errorf("sets %v: %s %+v: want a calibration row with error in [%g, %g]", c.sets, r.ID, r, c.lo, c.hi)
			}
		}
		if found != len(calibratedLaunch) {
			t.Errorf("sets %v: %d of the rows %v (skipped %v)", c.sets, found, calibratedLaunch, rep.Skipped)
		}
	}
}

func TestBadLaunchRows(t *testing.T) {
	const head = "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source\n"
	for name, row := range map[string]string{
		"no n":      "l,A100-80GB,,launch,1024,,,2.6,,us,,test\n",
		"odd n":     "l,A100-80GB,,launch,1024,4095,,2.6,,us,,test\n",
		"no m":      "l,A100-80GB,,launch,,4096,,2.6,,us,,test\n",
		"partial m": "l,A100-80GB,,launch,100,4096,,2.6,,us,,test\n",
		"cycles":    "l,A100-80GB,,launch,1024,4096,,2.6,,cycles,,test\n",
	} {
		_, err := ParsePoints(strings.NewReader(head+row), "launch.csv")
		if err == nil || !strings.Contains(err.Error(), "launch.csv") {
			t.Errorf("%s: want an error naming the file, got %v", name, err)
		}
	}
}
