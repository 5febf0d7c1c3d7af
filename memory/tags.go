package memory

// tagArray is a set-associative, sectored tag store with true LRU, kept in
// flat arrays (no maps, no allocation per access) because the fast model
// looks up every line of every tile. Ways of set s are entries
// s*ways .. s*ways+ways-1. The arrays a lookup scans (tags, and LRU stamps
// for a victim) are apart from the state of one entry, which sits in one
// struct: a hit touches the set's tags, one stamp and one entry.
type tagArray struct {
	sets, ways int
	tag        []uint64 // local line index + 1; 0 = invalid
	stamp      []uint64 // LRU: last use
	entry      []tagEntry
	clock      uint64
	last       int // entry of the last access
}

// tagEntry is the state of one cached line.
type tagEntry struct {
	valid uint64  // sector mask
	dirty uint64  // sector mask
	ready float64 // cycle the line's last fill arrives
	class uint8   // class that last wrote the line
	// warm are the dirty sectors the warm pass (kernel.l2_start: repeat)
	// left, not written since: the earlier kernel's output.
	warm uint64
}

func newTagArray(sets, ways int) *tagArray {
	n := sets * ways
	return &tagArray{sets: sets, ways: ways, tag: make([]uint64, n),
		stamp: make([]uint64, n), entry: make([]tagEntry, n)}
}

// eviction describes a dirty victim.
type eviction struct {
	local   uint64
	sectors uint64 // dirty mask
	class   Class
	warm    uint64 // of sectors, those the warm pass left dirty (tagEntry.warm)
}

// access looks up a line, fills the sectors in mask and returns the mask
// of sectors that missed. With write, the sectors become dirty and need no
// fill. A dirty victim is returned in ev (ev.sectors != 0).
func (t *tagArray) access(local, mask uint64, write bool, c Class) (
	miss uint64, ev eviction) {
	t.clock++
	base := int(local%uint64(t.sets)) * t.ways
	e := t.find(base, local+1)
	if e < 0 {
		e = t.victim(base)
		if v := &t.entry[e]; t.tag[e] != 0 && v.dirty != 0 {
			ev = eviction{t.tag[e] - 1, v.dirty, Class(v.class), v.warm}
		}
		t.tag[e] = local + 1
		t.entry[e] = tagEntry{class: t.entry[e].class}
	}
	t.last = e
	t.stamp[e] = t.clock
	en := &t.entry[e]
	miss = mask &^ en.valid
	en.valid |= mask
	if write {
		en.dirty |= mask
		en.warm &^= mask
		en.class = uint8(c)
	}
	return miss, ev
}

// markWarm records that the dirty sectors in mask of the last accessed
// line were left by the warm pass, not by the running kernel.
func (t *tagArray) markWarm(mask uint64) {
	en := &t.entry[t.last]
	en.warm |= mask & en.dirty
}

func (t *tagArray) find(base int, tag uint64) int {
	for w := base; w < base+t.ways; w++ {
		if t.tag[w] == tag {
			return w
		}
	}
	return -1
}

// victim is an invalid way if there is one, else the least recently used.
func (t *tagArray) victim(base int) int {
	v := base
	for w := base; w < base+t.ways; w++ {
		if t.tag[w] == 0 {
			return w
		}
		if t.stamp[w] < t.stamp[v] {
			v = w
		}
	}
	return v
}

// readyAt is when the data of the last accessed line is in the cache: a
// hit on a line whose fill is still on its way waits for the fill (as an
// MSHR merge does).
func (t *tagArray) readyAt() float64 { return t.entry[t.last].ready }

// filledAt records when the fill of the last accessed line arrives.
func (t *tagArray) filledAt(c float64) {
	en := &t.entry[t.last]
	en.ready = max(en.ready, c)
}

// cleanAll reports every dirty line to fn and marks it clean.
func (t *tagArray) cleanAll(fn func(eviction)) {
	for e := range t.tag {
		if en := &t.entry[e]; t.tag[e] != 0 && en.dirty != 0 {
			fn(eviction{t.tag[e] - 1, en.dirty, Class(en.class), en.warm})
			en.dirty, en.warm = 0, 0
		}
	}
}
