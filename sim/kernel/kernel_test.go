package kernel

import (
	"testing"
)

// TestRasterOrderIsCUTLASSSwizzle checks ctaCoord against CUTLASS's
// GemmIdentityThreadblockSwizzle<8>: bands of up to 8 tile columns walked
// row by row, narrower bands for narrow grids, every tile exactly once.
func TestRasterOrderIsCUTLASSSwizzle(t *testing.T) {
	for _, c := range []struct{ tilesM, tilesN, width int }{
		{6, 384, 8}, {6, 24, 8}, {128, 128, 8}, {16, 5, 4}, {4, 3, 4},
		{3, 2, 2}, {5, 1, 1}, {6, 13, 8},
	} {
		p := &Plan{TilesM: c.tilesM, TilesN: c.tilesN, SplitK: 1,
			Swizzle: swizzleWidth(c.tilesN)}
		p.Shape.Batch = 1
		if p.Swizzle != c.width {
			t.Errorf("%dx%d tiles: band width %d, want %d", c.tilesM, c.tilesN, p.Swizzle, c.width)
		}
		seen := make(map[[2]int]bool)
		for i := 0; i < c.tilesM*c.tilesN; i++ {
			_, tm, tn, _ := p.ctaCoord(i)
			if tm < 0 || tm >= c.tilesM || tn < 0 || tn >= c.tilesN || seen[[2]int{tm, tn}] {
				t.Fatalf("%dx%d tiles: CTA %d -> (%d,%d) out of range or repeated", c.tilesM, c.tilesN, i, tm, tn)
			}
			seen[[2]int{tm, tn}] = true
			// Full bands follow CUTLASS's formula: m = x >> log, n = y*w + x&(w-1).
			w := p.Swizzle
			if y := i / (w * c.tilesM); (y+1)*w <= c.tilesN {
				x := i % (w * c.tilesM)
				if tm != x/w || tn != y*w+x%w {
					t.Fatalf("%dx%d tiles: CTA %d -> (%d,%d), CUTLASS gives (%d,%d)", c.tilesM, c.tilesN, i, tm, tn, x/w, y*w+x%w)
				}
			}
		}
	}
}
