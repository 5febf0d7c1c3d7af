package sm

// Calendar orders the sub-partitions' scans by (cycle, sequence): within
// a cycle, scans run in the order they were requested, so same-cycle
// order is fixed by the model, not by the engine's heap. Near wakes sit
// in a ring of per-cycle lists, far ones in a heap. The GPU keeps one
// Akita event pending, at the calendar's earliest cycle, and runs every
// scan due then from it.
type Calendar struct {
	ring  [ringSize][]*SubPartition
	base  uint64 // the ring holds cycles [base, base+ringSize)
	inRng int
	far   SeqHeap[*SubPartition]
	gen   uint64 // generation of the pending engine event
	evAt  uint64 // its cycle (never: none)
	// At schedules the pending engine event (as one of SM 0's own).
	At func(c uint64, fn func())
}

// NewCalendar is an empty calendar with no engine event pending.
func NewCalendar() Calendar { return Calendar{evAt: Never} }

const ringSize = 512

func (cal *Calendar) push(c uint64, sp *SubPartition) {
	if c < cal.base+ringSize {
		slot := &cal.ring[c%ringSize]
		*slot = append(*slot, sp)
		cal.inRng++
		return
	}
	cal.far.Push(c, sp)
}

// earliest is the first cycle with a wake (never: none).
func (cal *Calendar) earliest() uint64 {
	if cal.inRng > 0 {
		for c := cal.base; c < cal.base+ringSize; c++ {
			if len(cal.ring[c%ringSize]) > 0 {
				return c
			}
		}
	}
	if cal.far.Len() > 0 {
		return cal.far.Min()
	}
	return Never
}

// advance moves the ring to start at cycle c, pulling far wakes in.
func (cal *Calendar) advance(c uint64) {
	cal.base = c
	for cal.far.Len() > 0 && cal.far.Min() < c+ringSize {
		cycle, sp := cal.far.Pop()
		slot := &cal.ring[cycle%ringSize]
		*slot = append(*slot, sp)
		cal.inRng++
	}
}

// schedule queues a scan of sp at cycle c.
func (cal *Calendar) schedule(c uint64, sp *SubPartition) {
	cal.push(c, sp)
	if c < cal.evAt {
		cal.arm(c)
	}
}

// arm makes the one pending engine event fire at cycle c (an earlier
// pending one is superseded by generation).
func (cal *Calendar) arm(c uint64) {
	cal.gen++
	cal.evAt = c
	gen := cal.gen
	cal.At(c, func() {
		if gen == cal.gen {
			cal.run(c)
		}
	})
}

// run runs every scan due at cycle c (a scan may queue another at c,
// which runs after it).
func (cal *Calendar) run(c uint64) {
	cal.evAt = Never
	cal.advance(c)
	slot := &cal.ring[c%ringSize]
	for i := 0; i < len(*slot); i++ {
		sp := (*slot)[i]
		cal.inRng--
		if sp.wakeAt != c {
			continue // superseded by an earlier wake
		}
		sp.wakeAt = Never
		sp.scan(c)
	}
	*slot = (*slot)[:0]
	cal.base = c + 1
	if next := cal.earliest(); next < cal.evAt {
		cal.arm(next)
	}
}
