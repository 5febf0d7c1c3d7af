package sim

// seqHeap is a min-heap of values ordered by (cycle, sequence), the
// sequence being the order of the pushes: values due on the same cycle
// come out in the order they went in, whatever the heap's shape, so the
// model fixes same-cycle order and not the heap (the CTA dispatcher's
// launches, the calendar's far wakes).
type seqHeap[T any] struct {
	items []seqItem[T]
	seq   uint64
}

type seqItem[T any] struct {
	cycle, seq uint64
	v          T
}

func (h *seqHeap[T]) len() int { return len(h.items) }

// min is the earliest cycle in the heap (len() > 0).
func (h *seqHeap[T]) min() uint64 { return h.items[0].cycle }

func (h *seqHeap[T]) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if a.cycle != b.cycle {
		return a.cycle < b.cycle
	}
	return a.seq < b.seq
}

// push adds v, due at cycle.
func (h *seqHeap[T]) push(cycle uint64, v T) {
	h.seq++
	h.items = append(h.items, seqItem[T]{cycle: cycle, seq: h.seq, v: v})
	for i := len(h.items) - 1; i > 0; {
		up := (i - 1) / 2
		if !h.less(i, up) {
			break
		}
		h.items[i], h.items[up] = h.items[up], h.items[i]
		i = up
	}
}

// pop removes the earliest value (len() > 0) and returns it with its
// cycle.
func (h *seqHeap[T]) pop() (uint64, T) {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = seqItem[T]{}
	h.items = h.items[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < last && h.less(l, small) {
			small = l
		}
		if r < last && h.less(r, small) {
			small = r
		}
		if small == i {
			break
		}
		h.items[i], h.items[small] = h.items[small], h.items[i]
		i = small
	}
	return top.cycle, top.v
}
