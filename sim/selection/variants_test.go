package selection

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// kernel.stream_k and kernel.serial_split_k drive the candidate list:
// off (the defaults), no candidate runs either schedule; on, every tile
// that runs the GEMM has a stream-K candidate and every split factor
// above 1 a serial one beside its parallel one; a pinned name runs its
// own schedule whatever the keys say.
func TestScheduleKeysDriveCandidates(t *testing.T) {
	g := kernel.Shape{M: 256, N: 256, K: 4096, Batch: 1, Precision: tensorcore.FP16}
	count := func(sets ...string) map[kernel.Schedule]int {
		ld, err := configs.Load(nil, sets)
		if err != nil {
			t.Fatal(err)
		}
		plans, _ := Candidates(ld.Config, g)
		n := map[kernel.Schedule]int{}
		for _, p := range plans {
			n[p.Schedule]++
		}
		return n
	}
	off := count()
	if off[kernel.StreamK] != 0 || off[kernel.SerialSplitK] != 0 || off[kernel.ParallelSplitK] == 0 {
		t.Fatalf("defaults: candidates by schedule %v, want parallel split-K and no serial or stream-K", off)
	}
	on := count("kernel.stream_k=true", "kernel.serial_split_k=true")
	if on[kernel.StreamK] != off[kernel.DataParallel] {
		t.Errorf("stream_k: %d stream-K candidates, want one per tile (%d)", on[kernel.StreamK], off[kernel.DataParallel])
	}
	if on[kernel.SerialSplitK] != off[kernel.ParallelSplitK] {
		t.Errorf("serial_split_k: %d serial candidates, want one per parallel one (%d)",
			on[kernel.SerialSplitK], off[kernel.ParallelSplitK])
	}
	for name, want := range map[string]kernel.Schedule{
		"128x128x32_64x64_s5_streamk":  kernel.StreamK,
		"128x128x32_64x64_s5_serialk3": kernel.SerialSplitK,
	} {
		pinned := count("kernel.force=" + name)
		if pinned[want] != 1 || len(pinned) != 1 {
			t.Errorf("kernel.force=%s: candidates %v, want one %v", name, pinned, want)
		}
	}
}

// With kernel.stream_k, Rank keeps the pre-model's best non-stream-K
// kernels and adds each kept tile's stream-K twin where its
// decomposition has stream-K CTAs: on 1.25 waves (640x1024x2048 on 16
// SMs) the twins come in beside the data-parallel tiles; on whole waves
// (512x1024x2048) there are none to add.
func TestRankSimulatesStreamKBesideItsTile(t *testing.T) {
	for _, c := range []struct {
		m    int
		twin bool
	}{{640, true}, {512, false}} {
		ld, err := configs.Load(nil, []string{"kernel.stream_k=true", "gpu.sm_count=16"})
		if err != nil {
			t.Fatal(err)
		}
		g := kernel.Shape{M: c.m, N: 1024, K: 2048, Batch: 1, Precision: tensorcore.FP16}
		plans, _ := Rank(ld.Config, g)
		tiles := map[string]bool{}
		var sk []string
		for _, p := range plans {
			if p.Schedule == kernel.StreamK {
				sk = append(sk, p.Tile.Name())
			} else {
				tiles[p.Tile.Name()] = true
			}
		}
		if len(plans)-len(sk) != ld.Config.Kernel.SimulatedCandidates {
			t.Errorf("M %d: %d ranked kernels besides stream-K, want %d", c.m, len(plans)-len(sk),
				ld.Config.Kernel.SimulatedCandidates)
		}
		for _, name := range sk {
			if !tiles[name] {
				t.Errorf("M %d: stream-K %s ranked without its tile", c.m, name)
			}
		}
		if (len(sk) > 0) != c.twin {
			t.Errorf("M %d: stream-K twins %v, want some: %v", c.m, sk, c.twin)
		}
	}
}
