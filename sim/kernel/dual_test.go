package kernel

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// TestMeanProductsFromMasks: the dual-side work per instruction is the
// count of positions both masks keep: all of A's when B keeps the same
// positions, none when they are disjoint (clamped to 1), and for
// independent uniform 2:4 masks the expectation m*n*K/4.
func TestMeanProductsFromMasks(t *testing.T) {
	p := tensorcore.Pattern{N: 2, M: 4}
	inst := tensorcore.Shape{M: 16, N: 8, K: 64}
	s := &Shape{M: 256, N: 256, K: 512, Pattern: p}
	fixed := func(pos ...int) maskSource { return func(int, int) []int { return pos } }
	if got := meanProducts(s, inst, fixed(0, 2), fixed(0, 2), 1); got != 16*8*32 {
		t.Errorf("same masks: %d products, want %d", got, 16*8*32)
	}
	if got := meanProducts(s, inst, fixed(0, 1), fixed(2, 3), 1); got != 1 {
		t.Errorf("disjoint masks: %d products, want 1", got)
	}
	if got := meanProducts(s, inst, fixed(0, 1), fixed(1, 2), 1); got != 16*8*16 {
		t.Errorf("one shared position per chunk: %d products, want %d", got, 16*8*16)
	}
	a, b := syntheticMask(p, 1, "A:x"), syntheticMask(p, 1, "B:x")
	got := meanProducts(s, inst, a, b, 1)
	if want := 16 * 8 * 64 / 4; math.Abs(float64(got)/float64(want)-1) > 0.02 {
		t.Errorf("independent masks: %d products, want about %d", got, want)
	}
}
