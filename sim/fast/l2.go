package fast

import "github.com/stcsim/stcsim/configs"

// l2State follows what the write-back L2 holds across a kernel's waves:
// the bytes allocated in it, in order (each wave's operand fills, clean,
// then its D, dirty), leave it oldest first once more than l2.size_kb
// has been allocated. D is written once and never read again in the
// kernel, so in the instruction tier's LRU its lines age out in the
// order they were written, behind the operands that CTAs keep reusing.
// A dirty victim goes to DRAM through its slice's write-back queue
// (l2.writeback_entries lines per slice): a write or fill that evicts
// one while the queues are full waits for DRAM.
type l2State struct {
	capacity float64 // bytes the L2 holds
	queue    float64 // bytes of dirty victims the write-back queues hold
	segs     []segment
	next     int     // the first segment not wholly evicted
	alloc    float64 // bytes allocated so far
	evicted  float64 // of which left the L2
	dirtyOut float64 // dirty bytes evicted so far
}

// segment is one allocation: it ends at byte end of the allocation
// order.
type segment struct {
	end   float64
	dirty bool
}

func newL2State(cfg *configs.Config) l2State {
	l2 := cfg.Memory.L2
	slices := l2.Partitions * l2.SlicesPerPartition
	return l2State{capacity: float64(l2.SizeKB) * 1024,
		queue: float64(slices * l2.WritebackEntries * l2.LineBytes)}
}

// allocate adds bytes and returns the dirty bytes they evict.
func (s *l2State) allocate(bytes float64, dirty bool) float64 {
	if bytes <= 0 {
		return 0
	}
	s.alloc += bytes
	s.segs = append(s.segs, segment{end: s.alloc, dirty: dirty})
	out := 0.0
	for to := s.alloc - s.capacity; s.evicted < to; {
		seg := s.segs[s.next]
		upto := min(seg.end, to)
		if seg.dirty {
			out += upto - s.evicted
		}
		s.evicted = upto
		if upto == seg.end {
			s.next++
		}
	}
	s.dirtyOut += out
	return out
}

// spilled is the DRAM bytes of the split-K reduction's reads of bytes
// of partials: those the L2 has evicted.
func (s *l2State) spilled(bytes float64) float64 {
	return min(bytes, s.dirtyOut)
}
