package sm

import (
	"math/rand"
	"sort"
	"testing"
)

// TestSeqHeapOrder: interleaved pushes and pops come out by cycle, and
// within a cycle in push order, as a stable sort of the pushes would
// give them.
func TestSeqHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var h SeqHeap[int]
	type rec struct {
		cycle uint64
		id    int
	}
	var pending, got, want []rec
	for id := 0; id < 5000; id++ {
		c := uint64(rng.Intn(50))
		h.Push(c, id)
		pending = append(pending, rec{c, id})
		if rng.Intn(3) == 0 {
			sort.SliceStable(pending, func(i, j int) bool { return pending[i].cycle < pending[j].cycle })
			want = append(want, pending[0])
			pending = pending[1:]
			c, v := h.Pop()
			got = append(got, rec{c, v})
		}
	}
	for h.Len() > 0 {
		c, v := h.Pop()
		got = append(got, rec{c, v})
	}
	sort.SliceStable(pending, func(i, j int) bool { return pending[i].cycle < pending[j].cycle })
	want = append(want, pending...)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pop %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
