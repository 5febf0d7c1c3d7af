package kernel

import (
	"fmt"
	"slices"
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
// factors, that the k-steps of a tile's CTAs (walked through ctaCoord as
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
				b, tm, tn, s := p.ctaCoord(i)
				if p.stepsOf(s) < 1 {
					t.Errorf("K %d split %d: split %d has no k-step", k, split, s)
				}
				steps[[3]int{b, tm, tn}] += p.stepsOf(s)
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

// TestSerialSplitKCoversKOnce: the serial splits of every tile cover
// ceil(K / BK) k-steps once, each split's k-range following the previous
// one's; split s waits for its tile's semaphore to hold s and releases it
// to s+1 (the last to 0, ready for the next launch), and only the first
// split reads no earlier D.
func TestSerialSplitKCoversKOnce(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{96, 1000, 4100} {
		for _, split := range []int{2, 3, 5} {
			g := Shape{M: 300, N: 260, K: k, Batch: 2, Precision: tensorcore.FP16}
			p, err := NewAs(ld.Config, g, denseTile, split, SerialSplitK)
			if split*denseTile.BK > k {
				continue // too short to split (TestParallelSplitKCoversKOnce)
			}
			if err != nil {
				t.Fatalf("K %d split %d: %v", k, split, err)
			}
			want := (k + denseTile.BK - 1) / denseTile.BK
			next := map[[3]int]int{} // the k-step each tile's next split starts at
			for i := 0; i < p.CTAs; i++ {
				c := NewCTA(p, i)
				s := c.Segs[0]
				tile := [3]int{s.Batch, s.TileM, s.TileN}
				if len(c.Segs) != 1 || s.KStart != next[tile] || s.Steps < 1 {
					t.Fatalf("K %d split %d: CTA %d runs %d segments from k-step %d (%d steps), want one from %d",
						k, split, i, len(c.Segs), s.KStart, s.Steps, next[tile])
				}
				next[tile] += s.Steps
				e := s.Epi
				release := (s.Split + 1) % split
				if e.Wait != s.Split || e.Signal != SignalSet || e.Value != release || e.Dest != DestD ||
					(e.Source&SourceD != 0) != (s.Split > 0) {
					t.Errorf("K %d split %d: split %d epilogue %+v", k, split, s.Split, e)
				}
			}
			for tile, n := range next {
				if n != want {
					t.Errorf("K %d split %d: tile %v covered %d k-steps, want %d", k, split, tile, n, want)
				}
			}
		}
	}
}

// TestStreamKCoversKOnce: over several GEMMs and SM counts, every k-step
// of every tile is run by exactly one segment of one CTA; each tile is
// written to D by one segment, the one that runs its last k-step; every
// other segment of a tile shares partial sums, and each segment that
// waits waits for exactly the number of the tile's segments run by
// lower-numbered stream-K CTAs (the turnstile), so no CTA waits on a later
// one; and the stream-K CTAs' shares differ by at most one k-step.
func TestStreamKCoversKOnce(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ m, n, k, sms int }{
		{2048, 2048, 2048, 108}, {640, 1024, 2048, 16}, {1024, 1024, 1000, 16},
		{256, 256, 4096, 16}, {384, 640, 512, 7}, {4096, 4096, 256, 108},
	} {
		cfg := *ld.Config
		cfg.GPU.SMCount = c.sms
		g := Shape{M: c.m, N: c.n, K: c.k, Batch: 1, Precision: tensorcore.FP16}
		p, err := NewAs(&cfg, g, denseTile, 1, StreamK)
		if err != nil {
			t.Fatal(err)
		}
		m := p.StreamK()
		name := fmt.Sprintf("%dx%dx%d on %d SMs", c.m, c.n, c.k, c.sms)
		type owner struct{ cta, seg int }
		runs := map[[3]int]owner{} // (tm, tn, k-step) -> who ran it
		writes := map[[2]int]int{}
		var shares []int
		for i := 0; i < p.CTAs; i++ {
			cta := NewCTA(p, i)
			n := 0
			for j, s := range cta.Segs {
				n += s.Steps
				for k := s.KStart; k < s.KStart+s.Steps; k++ {
					key := [3]int{s.TileM, s.TileN, k}
					if o, ok := runs[key]; ok {
						t.Fatalf("%s: tile (%d,%d) k-step %d run by CTA %d and %d", name, s.TileM, s.TileN, k, o.cta, i)
					}
					runs[key] = owner{i, j}
				}
				ends := s.KStart+s.Steps == m.ItersPerTile
				if (s.Epi.Dest == DestD) != ends {
					t.Errorf("%s: CTA %d segment %d of tile (%d,%d) ends the tile %v but writes %v",
						name, i, j, s.TileM, s.TileN, ends, s.Epi.Dest)
				}
				if s.Epi.Dest == DestD {
					writes[[2]int{s.TileM, s.TileN}]++
				}
				if s.Epi.Waits() && (s.KStart == 0 || s.Epi.Wait < 1) {
					t.Errorf("%s: CTA %d segment %d waits %d from k-step %d", name, i, j, s.Epi.Wait, s.KStart)
				}
			}
			if i < m.SKBlocks {
				shares = append(shares, n)
			}
		}
		if want := p.TilesM * p.TilesN * m.ItersPerTile; len(runs) != want {
			t.Errorf("%s: %d (tile, k-step) pairs run, want %d", name, len(runs), want)
		}
		if len(writes) != p.TilesM*p.TilesN {
			t.Errorf("%s: %d tiles written, want %d", name, len(writes), p.TilesM*p.TilesN)
		}
		for tile, n := range writes {
			if n != 1 {
				t.Errorf("%s: tile %v written %d times", name, tile, n)
			}
		}
		if len(shares) > 0 && slices.Max(shares)-slices.Min(shares) > 1 {
			t.Errorf("%s: stream-K shares from %d to %d k-steps", name, slices.Min(shares), slices.Max(shares))
		}
	}
}

// TestStreamKDecomposition holds blocksFor to CUTLASS's get_blocks worked
// by hand from threadblock_swizzle_streamk.h: 2048^3 on 128x128 tiles is
// 256 tiles on 108 SMs at 2 CTAs each, 2 full waves and 40 tiles over:
// full waves (2) are not below the occupancy and 2 % 2 != 1, so the last
// full wave joins the partial one: 108 data-parallel tiles, and stream-K
// over 148 tiles at most one more CTA per SM (2 - (2-1) % 2), a whole wave
// of 108 CTAs. Whole waves (216 tiles) stay data-parallel. 120 tiles at
// one CTA per SM: all go stream-K over one wave of 108 CTAs (72
// iterations each against 128 data-parallel; fix-up cost int(2 + 0.02 x 2
// x 72 + 2 x 2) = 8, saving 48).
func TestStreamKDecomposition(t *testing.T) {
	for _, c := range []struct {
		tiles, iters, sms, occ int
		dp, sk                 int
	}{
		{256, 64, 108, 2, 108, 108},
		{216, 64, 108, 2, 216, 0},
		{120, 64, 108, 1, 0, 108},
	} {
		dp, sk := blocksFor(c.tiles, c.iters, c.sms, c.occ)
		if dp != c.dp || sk != c.sk {
			t.Errorf("%d tiles of %d iterations on %d SMs x %d: %d DP tiles, %d SK CTAs; want %d, %d",
				c.tiles, c.iters, c.sms, c.occ, dp, sk, c.dp, c.sk)
		}
	}
}
