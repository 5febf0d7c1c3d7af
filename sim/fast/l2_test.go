package fast

import (
	"math/rand/v2"
	"testing"
)

// The L2's account against a line-by-line queue of the same
// capacity: for random runs of clean and dirty allocations, in whole
// lines, each allocation's evicted dirty bytes and the total are the
// queue's.
func TestL2AccountMatchesALineQueue(t *testing.T) {
	const line = 128
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		capLines := 1 + rng.IntN(64)
		s := l2State{capacity: float64(capLines * line)}
		var queue []bool // dirty, oldest first
		total := 0
		for step := range 40 {
			n, dirty := 1+rng.IntN(3*capLines), rng.IntN(2) == 0
			want := 0
			for range n {
				queue = append(queue, dirty)
				if len(queue) > capLines {
					if queue[0] {
						want += line
					}
					queue = queue[1:]
				}
			}
			total += want
			if got := s.allocate(float64(n*line), dirty); got != float64(want) {
				t.Fatalf("trial %d step %d (%d lines, dirty %v, capacity %d): %v dirty bytes out, the queue %d",
					trial, step, n, dirty, capLines, got, want)
			}
		}
		if s.dirtyOut != float64(total) {
			t.Fatalf("trial %d: %v dirty bytes out in all, the queue %d", trial, s.dirtyOut, total)
		}
	}
}
