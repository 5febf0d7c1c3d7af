package kernel

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestScheduleNamesRoundTrip checks that every schedule's kernel name
// parses (configs.ParseKernel) back to the same tile, schedule and
// split factor, and that each schedule has its own record value.
func TestScheduleNamesRoundTrip(t *testing.T) {
	tile := configs.TileConfig{BM: 128, BN: 128, BK: 32, WarpM: 64, WarpN: 64, Stages: 4}
	seen := map[string]bool{}
	for _, c := range []struct {
		s     Schedule
		split int
	}{{DataParallel, 1}, {ParallelSplitK, 3}, {SerialSplitK, 4}, {StreamK, 1}} {
		p := &Plan{Tile: tile, SplitK: c.split, Schedule: c.s}
		k, err := configs.ParseKernel(p.Name())
		if err != nil {
			t.Fatalf("%v: %s does not parse: %v", c.s, p.Name(), err)
		}
		if k.Tile != tile.Name() || ScheduleOf(k) != c.s {
			t.Errorf("%s parses to tile %s schedule %v, want %s %v",
				p.Name(), k.Tile, ScheduleOf(k), tile.Name(), c.s)
		}
		if c.split > 1 && k.N != c.split {
			t.Errorf("%s parses to %d splits, want %d", p.Name(), k.N, c.split)
		}
		if seen[c.s.String()] {
			t.Errorf("two schedules print %q", c.s)
		}
		seen[c.s.String()] = true
	}
}

// TestNewSetsSchedule checks that New names what runs: parallel split-K
// for a split factor above 1, data-parallel otherwise, in the name too.
func TestNewSetsSchedule(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := Shape{M: 1024, N: 1024, K: 4096, Batch: 1, Precision: tensorcore.FP16}
	for split, want := range map[int]Schedule{1: DataParallel, 4: ParallelSplitK} {
		p, err := New(ld.Config, g, denseTile, split)
		if err != nil {
			t.Fatal(err)
		}
		if p.Schedule != want {
			t.Errorf("split %d: schedule %v, want %v", split, p.Schedule, want)
		}
		if k, _ := configs.ParseKernel(p.Name()); ScheduleOf(k) != want {
			t.Errorf("split %d: name %s names schedule %v, want %v",
				split, p.Name(), ScheduleOf(k), want)
		}
	}
}

// TestParallelSplitKCoversKOnce checks, for several K and split
// factors, that the k-steps of a tile's CTAs (walked through CTACoord as
// the launch walks them) add up to ceil(K / BK): every k-tile once,
// none twice, none dropped, and every split has at least one.
func TestParallelSplitKCoversKOnce(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{32, 96, 1000, 4096, 4100} {
		for _, split := range []int{1, 2, 3, 5, 8} {
			g := Shape{M: 300, N: 260, K: k, Batch: 2, Precision: tensorcore.FP16}
			p, err := New(ld.Config, g, denseTile, split)
			if split*denseTile.BK > k {
				if err == nil {
					t.Errorf("K %d split %d: want an error, K too short", k, split)
				}
				continue
			}
			if err != nil {
				t.Fatalf("K %d split %d: %v", k, split, err)
			}
			want := (k + denseTile.BK - 1) / denseTile.BK
			steps := map[[3]int]int{}
			for i := 0; i < p.CTAs; i++ {
				b, tm, tn, s := p.CTACoord(i)
				if p.StepsOf(s) < 1 {
					t.Errorf("K %d split %d: split %d has no k-step", k, split, s)
				}
				steps[[3]int{b, tm, tn}] += p.StepsOf(s)
			}
			if len(steps) != 2*3*3 {
				t.Errorf("K %d split %d: %d tiles, want 18", k, split, len(steps))
			}
			for tile, n := range steps {
				if n != want {
					t.Errorf("K %d split %d: tile %v runs %d k-steps, want %d",
						k, split, tile, n, want)
				}
			}
			if p.TotalKSteps() != 18*want {
				t.Errorf("K %d split %d: TotalKSteps %d, want %d", k, split,
					p.TotalKSteps(), 18*want)
			}
		}
	}
}
