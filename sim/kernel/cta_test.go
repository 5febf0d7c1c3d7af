package kernel

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
)

// A CTA's per-stage state is one slot per cp.async buffer, whatever K is:
// a GEMM with 2^25 k-steps per CTA must not allocate per k-step (issue 13
// item 4: K = 2^30 grew memory until the machine ran out).
func TestCTAStateDoesNotGrowWithK(t *testing.T) {
	p := &Plan{Tile: configs.TileConfig{Stages: 4}, KSteps: 1 << 25,
		TilesM: 1, TilesN: 1, Swizzle: 1, SplitK: 1,
		Shape: Shape{Batch: 1}}
	c := NewCTA(p, 0)
	if n := len(c.Regions); n > p.Tile.Stages+1 {
		t.Errorf("%d stage slots for %d k-steps, want at most %d", n,
			p.KSteps, p.Tile.Stages+1)
	}
}
