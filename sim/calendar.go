package sim

// calendar orders the sub-partitions' scans by (cycle, sequence): within
// a cycle, scans run in the order they were requested, so same-cycle
// order is fixed by the model, not by the engine's heap. Near wakes sit
// in a ring of per-cycle lists, far ones in a heap. The GPU keeps one
// Akita event pending, at the calendar's earliest cycle, and runs every
// scan due then from it.
type calendar struct {
	ring  [ringSize][]*subPartition
	base  uint64 // the ring holds cycles [base, base+ringSize)
	inRng int
	far   seqHeap[*subPartition]
	gen   uint64 // generation of the pending engine event
	evAt  uint64 // its cycle (never: none)
	// at schedules the pending engine event (as one of SM 0's own).
	at func(c uint64, fn func())
}

func newCalendar() calendar { return calendar{evAt: never} }

const ringSize = 512

func (cal *calendar) push(c uint64, sp *subPartition) {
	if c < cal.base+ringSize {
		slot := &cal.ring[c%ringSize]
		*slot = append(*slot, sp)
		cal.inRng++
		return
	}
	cal.far.push(c, sp)
}

// earliest is the first cycle with a wake (never: none).
func (cal *calendar) earliest() uint64 {
	if cal.inRng > 0 {
		for c := cal.base; c < cal.base+ringSize; c++ {
			if len(cal.ring[c%ringSize]) > 0 {
				return c
			}
		}
	}
	if cal.far.len() > 0 {
		return cal.far.min()
	}
	return never
}

// advance moves the ring to start at cycle c, pulling far wakes in.
func (cal *calendar) advance(c uint64) {
	cal.base = c
	for cal.far.len() > 0 && cal.far.min() < c+ringSize {
		cycle, sp := cal.far.pop()
		slot := &cal.ring[cycle%ringSize]
		*slot = append(*slot, sp)
		cal.inRng++
	}
}

// schedule queues a scan of sp at cycle c.
func (cal *calendar) schedule(c uint64, sp *subPartition) {
	cal.push(c, sp)
	if c < cal.evAt {
		cal.arm(c)
	}
}

// arm makes the one pending engine event fire at cycle c (an earlier
// pending one is superseded by generation).
func (cal *calendar) arm(c uint64) {
	cal.gen++
	cal.evAt = c
	gen := cal.gen
	cal.at(c, func() {
		if gen == cal.gen {
			cal.run(c)
		}
	})
}

// run runs every scan due at cycle c (a scan may queue another at c,
// which runs after it).
func (cal *calendar) run(c uint64) {
	cal.evAt = never
	cal.advance(c)
	slot := &cal.ring[c%ringSize]
	for i := 0; i < len(*slot); i++ {
		sp := (*slot)[i]
		cal.inRng--
		if sp.wakeAt != c {
			continue // superseded by an earlier wake
		}
		sp.wakeAt = never
		sp.scan(c)
	}
	*slot = (*slot)[:0]
	cal.base = c + 1
	if next := cal.earliest(); next < cal.evAt {
		cal.arm(next)
	}
}
