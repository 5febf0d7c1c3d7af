package gpu

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// streamKTile is the tile: CUTLASS's 128x128x32 FP16 tile
// (5 stages here, 2 CTAs per SM).
const streamKTile = "128x128x32_64x64_s5"

// scheduled simulates g on a GPU of sms SMs under schedule s, with no
// fast path (every CTA and k-step simulated, as the stream-K run is).
func scheduled(t *testing.T, sms int, g kernel.Shape, s kernel.Schedule, split int) *Result {
	t.Helper()
	ld, err := configs.Load(nil, []string{"sim.extrapolate_waves=false",
		"sim.fast_forward=false", "gpu.sm_count=" + strconv.Itoa(sms)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	for _, tile := range cfg.Kernel.Candidates {
		if tile.Name() != streamKTile {
			continue
		}
		p, err := kernel.NewAs(cfg, g, tile, split, s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Simulate(cfg, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Fatalf("no tile %s", streamKTile)
	return nil
}

func fp16(m, n, k int) kernel.Shape {
	return kernel.Shape{M: m, N: n, K: k, Batch: 1, Precision: tensorcore.FP16}
}

// On 1.25 waves (640x1024x2048: 40 tiles on 16 SMs x 2 CTAs) stream-K
// is 8-35 % faster than the data-parallel kernel of the same tile (the
// issue's band, from the stream-K paper's A100 gains on such shapes): the
// data-parallel kernel's second wave runs 8 tiles on 32 slots, while
// stream-K deals the last full wave and the partial one evenly over one
// wave. Its tail (some SM idle for good) must shrink, and its fix-up must
// show in the record; the data-parallel run has none.
func TestStreamKShortensAPartialWave(t *testing.T) {
	t.Parallel()
	g := fp16(640, 1024, 2048)
	dp := scheduled(t, 16, g, kernel.DataParallel, 1)
	sk := scheduled(t, 16, g, kernel.StreamK, 1)
	gain := float64(dp.Cycles)/float64(sk.Cycles) - 1
	t.Logf("data-parallel %d cycles (tail %d), stream-K %d (tail %d): %.1f %% faster; fix-up %d B, %d wait cycles",
		dp.Cycles, dp.TailCycles, sk.Cycles, sk.TailCycles, 100*gain, sk.FixupBytes, sk.FixupWait)
	if gain < 0.08 || gain > 0.35 {
		t.Errorf("stream-K %.1f %% faster than data-parallel, want 8-35 %%", 100*gain)
	}
	if sk.TailCycles >= dp.TailCycles {
		t.Errorf("stream-K tail %d cycles, not below data-parallel's %d", sk.TailCycles, dp.TailCycles)
	}
	if dp.FixupBytes != 0 || dp.FixupWait != 0 {
		t.Errorf("data-parallel fix-up %d B, %d cycles, want none", dp.FixupBytes, dp.FixupWait)
	}
	// Each stream-K tile's peers but the finisher store a partial tile
	// and all but the first load one: at least one FP32 tile each way
	// per tile shared by two CTAs.
	tileB := uint64(128 * 128 * kernel.AccumulatorBytes)
	if sk.FixupBytes < 2*tileB || sk.FixupWait == 0 || sk.Breakdown.Fixup < 0 {
		t.Errorf("stream-K fix-up %d B, %d wait cycles: want at least %d B and a wait",
			sk.FixupBytes, sk.FixupWait, 2*tileB)
	}
}

// On whole waves (512x1024x2048: 32 tiles on 16 SMs x 2) CUTLASS's
// decomposition keeps every tile data-parallel, so stream-K is within 2 %
// of the data-parallel kernel (only the tiles' raster order differs) and
// has no fix-up.
func TestStreamKMatchesDataParallelOnWholeWaves(t *testing.T) {
	t.Parallel()
	g := fp16(512, 1024, 2048)
	dp := scheduled(t, 16, g, kernel.DataParallel, 1)
	sk := scheduled(t, 16, g, kernel.StreamK, 1)
	t.Logf("data-parallel %d cycles, stream-K %d", dp.Cycles, sk.Cycles)
	if d := float64(sk.Cycles)/float64(dp.Cycles) - 1; d > 0.02 || d < -0.02 {
		t.Errorf("stream-K %d cycles, data-parallel %d: %.1f %% apart, want within 2 %%", sk.Cycles, dp.Cycles, 100*d)
	}
	if sk.FixupBytes != 0 {
		t.Errorf("whole-wave stream-K moved %d fix-up bytes, want 0", sk.FixupBytes)
	}
}

// Serial split-K reduces in place: every split but the last writes its
// running D and the next reads it back, so the fix-up moves at least
// 2 x (splits-1) x M x N x 2 bytes (FP16 D) besides its flags, later
// splits wait on their tile's semaphore, and no reduction pass runs:
// parallel split-K of the same factor has no fix-up (its reduction pass
// is a kernel of its own).
func TestSerialSplitKReducesInPlace(t *testing.T) {
	t.Parallel()
	g := fp16(256, 512, 4096)
	serial := scheduled(t, 16, g, kernel.SerialSplitK, 4)
	par := scheduled(t, 16, g, kernel.ParallelSplitK, 4)
	want := uint64(2 * 3 * g.M * g.N * 2)
	t.Logf("serial %d cycles, fix-up %d B, %d wait cycles; parallel %d cycles",
		serial.Cycles, serial.FixupBytes, serial.FixupWait, par.Cycles)
	if serial.FixupBytes < want || serial.FixupBytes > want+want/10 {
		t.Errorf("serial split-K fix-up %d B, want %d plus its flags", serial.FixupBytes, want)
	}
	if serial.FixupWait == 0 {
		t.Error("serial split-K splits never waited on a semaphore")
	}
	if par.FixupBytes != 0 || par.FixupWait != 0 {
		t.Errorf("parallel split-K fix-up %d B, %d cycles, want none", par.FixupBytes, par.FixupWait)
	}
}

// The flag waits are deterministic: the same stream-K and serial split-K
// runs twice give the same cycles, traffic and fix-up.
func TestFixupIsDeterministic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s     kernel.Schedule
		split int
	}{{kernel.StreamK, 1}, {kernel.SerialSplitK, 3}} {
		g := fp16(384, 640, 1024)
		a := scheduled(t, 8, g, c.s, c.split)
		b := scheduled(t, 8, g, c.s, c.split)
		if a.Cycles != b.Cycles || a.FixupBytes != b.FixupBytes || a.FixupWait != b.FixupWait ||
			!reflect.DeepEqual(a.Mem, b.Mem) || a.Breakdown != b.Breakdown {
			t.Errorf("%v: two runs differ: %d/%d cycles, %d/%d B, %d/%d wait", c.s,
				a.Cycles, b.Cycles, a.FixupBytes, b.FixupBytes, a.FixupWait, b.FixupWait)
		}
	}
}
