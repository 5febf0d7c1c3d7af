package sweep

import (
	"testing"
)

// specSeeds are sweep files, among them every kind that once panicked,
// ran out of memory or was misread (issue 13 items 1, 5, 6, 12, 20).
var specSeeds = []string{
	"workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count: [54, 108]\n",
	"workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count.x: [1]\n",
	"workloads: [{gemms: [64x64x64]}]\nzip:\n  - {name.x: [a], gpu.sm_count: [1]}\n",
	"workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count: [54.9]\n",
	"workloads: [{gemms: [64x64x64]}]\nmodes: []\n",
	"workloads: [{gemms: [1073741824x1073741824x1073741824]}]\n",
	"workloads: [{gemms: [64x64x64]}]\ngrid:\n  a: [1,2,3,4,5,6,7,8,9,10]\n  b: [1,2,3,4,5,6,7,8,9,10]\n  c: [1,2,3,4,5,6,7,8,9,10]\n  d: [1,2,3,4,5,6,7,8,9,10]\n  e: [1,2,3,4,5,6,7,8,9,10]\n  f: [1,2,3,4,5,6,7,8,9,10]\n",
	"configs: [/etc/passwd]\nworkloads: [{gemms: [64x64x64]}]\n",
	"workloads: [{gemms: [64x64x64]}]\nset: [\"description=caf\\xe9\"]\n",
	"workloads: {}\n", "grid: [1]\n", "",
}

// maxFuzzPoints bounds the grids the fuzzer plans in full (each point
// loads a config).
const maxFuzzPoints = 16

// FuzzSweepSpec: no sweep file panics, and a plan's points have distinct
// configs and grid values that load again.
func FuzzSweepSpec(f *testing.F) {
	for _, s := range specSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse([]byte(text), "sweep.yaml")
		if err != nil {
			return
		}
		n := 1
		for _, ax := range s.Grid {
			n *= len(ax.Values)
		}
		for _, g := range s.Zip {
			n *= len(g[0].Values)
		}
		if n > maxFuzzPoints || n < 0 {
			if _, ok := s.pointCount(); ok && n > MaxPoints {
				t.Fatalf("%d points counted within the limit", n)
			}
			return
		}
		p, err := s.Plan(Resolver{})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, pt := range p.Points {
			if seen[pt.Hash] {
				t.Fatalf("two points with config %s", pt.Hash)
			}
			seen[pt.Hash] = true
			if _, err := pt.Load(); err != nil {
				t.Fatalf("point %s does not load again: %v", pt.Label(), err)
			}
		}
	})
}
