package energy

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

func testConfig() Config {
	return Config{LimitW: 400, ClockStepMHz: 15,
		VF:           []VFPoint{{210, 700}, {1110, 720}, {1410, 850}},
		BoardStaticW: 25, SMLeakageW: 0.2, SMClockPJ: 120, DataActivity: 0.5,
		Events: Events{MMA: PerPrecision{2.8, 2.8, 2.8, 1.4}, DataShare: 0.85,
			SparseSelect: 0.05, MetadataDecode: 8, FP32: 0.83, RFRead: 0.22, RFWrite: 0.22,
			Issue: 15, SmemWavefront: 30, L1Sector: 10, L2Sector: 30,
			Crossbar: 2.4, DRAM: 31}}
}

func someCounts() Counts {
	return Counts{Precision: tensorcore.FP16, DenseMMAs: 1e6, SparseMMAs: 1e6,
		DenseFMAs: 2e9, SparseFMAs: 2e9,
		SM:             SMActivity{Instructions: 3e6, RFReadBytes: 2e9, RFWriteBytes: 1e9, FP32Ops: 1e8},
		SmemWavefronts: 1e7, L1Sectors: 1e5, L2Sectors: 1e7,
		CrossbarBytes: 3e8, DRAMBytes: 1e8, SMs: 108}
}

func TestVoltsInterpolatesAndClamps(t *testing.T) {
	c := testConfig()
	for _, tc := range []struct {
		mhz  int
		want float64
	}{{100, 0.700}, {210, 0.700}, {660, 0.710}, {1260, 0.785}, {1410, 0.850},
		{2000, 0.850}} {
		if got := c.Volts(tc.mhz); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Volts(%d) = %g, want %g", tc.mhz, got, tc.want)
		}
	}
}

// Every event class costs energy: one more of any count never lowers it
// and a count of zero leaves that class at zero.
func TestEnergyGrowsWithEveryCount(t *testing.T) {
	c := testConfig()
	base := someCounts()
	b0, err := c.Energy(base, 1e6, 1410)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(&base).Elem()
	// DenseMMAs cost nothing of their own: their issue is in SM.Instructions.
	for _, path := range [][]int{{2}, {3}, {4}, {5, 0}, {5, 1}, {5, 2}, {5, 3},
		{6}, {7}, {8}, {9}, {10}} {
		n := base
		f := reflect.ValueOf(&n).Elem().FieldByIndex(path)
		f.SetUint(2 * f.Uint())
		b, _ := c.Energy(n, 1e6, 1410)
		if b.Total() <= b0.Total() {
			t.Errorf("doubling %s did not raise energy (%g <= %g)",
				v.Type().FieldByIndex(path).Name, b.Total(), b0.Total())
		}
	}
	idle, _ := c.Energy(Counts{Precision: tensorcore.FP16, SMs: 108}, 1e6, 1410)
	for _, cl := range idle.Classes() {
		static := cl.Name == "sm_static" || cl.Name == "board"
		if static != (cl.UJ > 0) {
			t.Errorf("no work: class %s = %g uJ", cl.Name, cl.UJ)
		}
	}
}

// The same events at a lower clock's lower voltage cost less energy each;
// the same work done in the same cycles at a lower clock draws less power.
func TestLowerClockCostsLessPerEvent(t *testing.T) {
	c := testConfig()
	n := someCounts()
	hi, _ := c.Energy(n, 1e6, 1410)
	lo, _ := c.Energy(n, 1e6, 1110)
	if lo.MMA >= hi.MMA || lo.L2 >= hi.L2 || lo.RegisterFile >= hi.RegisterFile {
		t.Errorf("dynamic energy at 1110 MHz %+v not below 1410 MHz %+v", lo, hi)
	}
	if lo.DRAM != hi.DRAM {
		t.Errorf("DRAM energy depends on the SM voltage: %g vs %g", lo.DRAM, hi.DRAM)
	}
	if Power(lo.Total(), 1e6, 1110) >= Power(hi.Total(), 1e6, 1410) {
		t.Error("power does not fall with the clock")
	}
	if c.IdlePower(108, 1110) >= c.IdlePower(108, 1410) {
		t.Error("idle power does not fall with the clock")
	}
}

func TestDataActivityScalesOnlyItsShare(t *testing.T) {
	c := testConfig()
	n := someCounts()
	random, _ := c.Energy(n, 1e6, 1410)
	c.DataActivity = 0
	zeros, _ := c.Energy(n, 1e6, 1410)
	if got := zeros.MMA / random.MMA; math.Abs(got-0.15) > 1e-9 {
		t.Errorf("zero-activity MMA energy is %.3f of random, want 0.15", got)
	}
	if zeros.RegisterFile != random.RegisterFile {
		t.Error("data activity changed a class other than the MMAs")
	}
}

func TestHighestFitting(t *testing.T) {
	clocks := []int{1410, 1395, 1380, 1365, 1350}
	for _, tc := range []struct {
		limit, start, want int
		ok                 bool
	}{{1380, 0, 1380, true}, {1380, 4, 1380, true}, {1380, 2, 1380, true},
		{2000, 3, 1410, true}, {1000, 1, 1350, false}, {1350, 0, 1350, true}} {
		calls := 0
		got, ok, err := HighestFitting(clocks, tc.start, func(mhz int) (bool, error) {
			calls++
			return mhz <= tc.limit, nil
		})
		if err != nil || got != tc.want || ok != tc.ok {
			t.Errorf("limit %d from %d: got %d %v %v, want %d %v", tc.limit,
				tc.start, got, ok, err, tc.want, tc.ok)
		}
		if calls > len(clocks) {
			t.Errorf("limit %d: %d calls for %d clocks", tc.limit, calls, len(clocks))
		}
	}
}

// The predicted clock never exceeds the true one when a kernel's cycles
// shrink at lower clocks (memory time is fixed in seconds).
func TestPredictClockIsSafe(t *testing.T) {
	c := testConfig()
	c.LimitW = 300
	n := someCounts()
	clocks := c.Clocks(1410)
	i := c.PredictClock(n, 2e6, clocks)
	b, _ := c.Energy(n, 2e6, clocks[i])
	if p := Power(b.Total(), 2e6, clocks[i]); p > c.LimitW {
		t.Errorf("predicted clock %d draws %g W > %g", clocks[i], p, c.LimitW)
	}
	if i > 0 {
		b, _ := c.Energy(n, 2e6, clocks[i-1])
		if Power(b.Total(), 2e6, clocks[i-1]) <= c.LimitW {
			t.Errorf("clock above the prediction (%d) also fits", clocks[i-1])
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{{func(c *Config) { c.LimitW = 0 }, "limit_w"},
		{func(c *Config) { c.VF[1].MHz = 100 }, "vf_table[1]"},
		{func(c *Config) { c.VF[2].MV = 600 }, "vf_table[2]"},
		{func(c *Config) { c.VF = nil }, "vf_table"},
		{func(c *Config) { c.DataActivity = 2 }, "data_activity"},
		{func(c *Config) { c.Events.DRAM = -1 }, "energy.dram_pj_per_byte"},
		{func(c *Config) { c.Events.DataShare = 1.5 }, "energy.mma_data_share"},
		{func(c *Config) { c.ClockStepMHz = 0 }, "clock_step_mhz"}} {
		c := testConfig()
		c.VF = append([]VFPoint(nil), c.VF...)
		tc.edit(&c)
		l := c.Validate()
		if len(l) == 0 || !strings.Contains(l[0].Error(), tc.want) {
			t.Errorf("want an error naming %s, got %v", tc.want, l)
		}
	}
	if l := testConfig().Validate(); len(l) != 0 {
		t.Errorf("valid config rejected: %v", l)
	}
}
