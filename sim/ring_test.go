package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
)

// A CTA's per-stage state is one slot per cp.async buffer, whatever K is:
// a GEMM with 2^25 k-steps per CTA must not allocate per k-step (issue 13
// item 4: K = 2^30 grew memory until the machine ran out).
func TestCTAStateDoesNotGrowWithK(t *testing.T) {
	p := &kernelPlan{tile: configs.TileConfig{Stages: 4}, kSteps: 1 << 25,
		tilesM: 1, tilesN: 1, swizzle: 1, splitK: 1,
		shape: gemmShape{Batch: 1}}
	s := &smUnit{gpu: &gpu{plan: p}}
	c := newCTA(s, 0)
	if n := len(c.regions); n > p.tile.Stages+1 {
		t.Errorf("%d stage slots for %d k-steps, want at most %d", n,
			p.kSteps, p.tile.Stages+1)
	}
}
