package selection

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// TestSM86RefusesTilesOverSharedMemory: the sm_86 library (rtx3090)
// lists CUTLASS's 128x128x64 4-stage tile, whose stages need 128 KB; the
// selection refuses it (sm_86 allows 100 KB) naming its bytes and the
// limit, and offers every other fp16 dense tile. On the A100 (164 KB)
// the same tile is a candidate.
func TestSM86RefusesTilesOverSharedMemory(t *testing.T) {
	const big = "128x128x64_64x64_s4"
	g := kernel.Shape{M: 4096, N: 4096, K: 4096, Batch: 1, Precision: tensorcore.FP16}
	offered := func(name string) (bool, []string) {
		ld, err := configs.Load([]string{name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		plans, rejected := Candidates(ld.Config, g)
		if len(plans) == 0 {
			t.Fatalf("%s: no candidate for %v", name, g)
		}
		for _, p := range plans {
			if p.Tile.Name() == big {
				return true, rejected
			}
		}
		return false, rejected
	}
	if ok, _ := offered("a100-40gb"); !ok {
		t.Errorf("a100-40gb: %s not offered (164 KB carve-out)", big)
	}
	ok, rejected := offered("rtx3090")
	if ok {
		t.Fatalf("rtx3090: %s offered, but its 131072 bytes of stages exceed sm_86's 100 KB", big)
	}
	why := strings.Join(rejected, "\n")
	for _, want := range []string{big, "131072 bytes", "102400-byte"} {
		if !strings.Contains(why, want) {
			t.Errorf("rtx3090: the refusal does not name %q:\n%s", want, why)
		}
	}
}
