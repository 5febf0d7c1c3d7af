package sm

// SeqHeap is a min-heap of values ordered by (cycle, sequence), the
// sequence being the order of the pushes: values due on the same cycle
// come out in the order they went in, whatever the heap's shape, so the
// model fixes same-cycle order and not the heap (the CTA dispatcher's
// launches, the calendar's far wakes).
type SeqHeap[T any] struct {
	Items []seqItem[T]
	seq   uint64
}

type seqItem[T any] struct {
	cycle, seq uint64
	V          T
}

func (h *SeqHeap[T]) Len() int { return len(h.Items) }

// Min is the earliest cycle in the heap (len() > 0).
func (h *SeqHeap[T]) Min() uint64 { return h.Items[0].cycle }

func (h *SeqHeap[T]) less(i, j int) bool {
	a, b := &h.Items[i], &h.Items[j]
	if a.cycle != b.cycle {
		return a.cycle < b.cycle
	}
	return a.seq < b.seq
}

// Push adds v, due at cycle.
func (h *SeqHeap[T]) Push(cycle uint64, v T) {
	h.seq++
	h.Items = append(h.Items, seqItem[T]{cycle: cycle, seq: h.seq, V: v})
	for i := len(h.Items) - 1; i > 0; {
		up := (i - 1) / 2
		if !h.less(i, up) {
			break
		}
		h.Items[i], h.Items[up] = h.Items[up], h.Items[i]
		i = up
	}
}

// Pop removes the earliest value (len() > 0) and returns it with its
// cycle.
func (h *SeqHeap[T]) Pop() (uint64, T) {
	top := h.Items[0]
	last := len(h.Items) - 1
	h.Items[0] = h.Items[last]
	h.Items[last] = seqItem[T]{}
	h.Items = h.Items[:last]
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
		h.Items[i], h.Items[small] = h.Items[small], h.Items[i]
		i = small
	}
	return top.cycle, top.V
}
