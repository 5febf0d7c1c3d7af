package memory

import "math"

// tagArray is a set-associative, sectored tag store with true LRU, kept in
// flat arrays (no maps, no allocation per access) because the fast model
// looks up every line of every tile. Ways of set s are entries
// s*ways .. s*ways+ways-1. The arrays a lookup scans (tags, and LRU stamps
// for a victim) are apart from the state of one entry, which sits in one
// struct: a hit touches the set's tags, one stamp and one entry.
//
// A tag is the line's index over the set count, + 1 (its set is where it
// sits; 0 = invalid), so that tags of a store whose lines all lie below
// 2^32 sets' worth fit 32 bits and a set of 16 ways is one 64-B line of
// the host's cache (narrow). The first tag that does not fit turns the
// store wide (64-bit tags, the same state) for the rest of its life.
type tagArray struct {
	sets, ways int
	shift      uint     // log2(sets) when sets is a power of two
	pow2       bool     // sets is a power of two: set and tag by mask and shift
	narrow     []uint32 // tags while every one fits 32 bits (nil once wide)
	wide       []uint64 // tags after the first that does not (nil before)
	stamp      []uint64 // LRU: last use
	entry      []tagEntry
	dirty      []tagDirty
	class      []uint8 // class that last wrote each entry's line
	clock      uint64
	last       int // entry of the last access
}

// tagEntry is what every lookup of a cached line reads: 16 bytes, four
// to one of the host's 64-B cache lines (on a large L2 the lookup's cache
// miss is the fast model's largest cost). What only a write, an eviction
// and the warm pass read is kept apart: tagDirty and tagArray.class.
type tagEntry struct {
	valid uint64  // sector mask
	ready float64 // cycle the line's last fill arrives
}

// tagDirty is a cached line's dirty state.
type tagDirty struct {
	dirty uint64 // sector mask
	// warm are the dirty sectors the warm pass (kernel.l2_start: repeat)
	// left, not written since: the earlier kernel's output.
	warm uint64
}

func newTagArray(sets, ways int) *tagArray {
	n := sets * ways
	t := &tagArray{sets: sets, ways: ways, narrow: make([]uint32, n),
		stamp: make([]uint64, n), entry: make([]tagEntry, n), dirty: make([]tagDirty, n),
		class: make([]uint8, n)}
	if sets&(sets-1) == 0 {
		t.pow2 = true
		for 1<<t.shift < sets {
			t.shift++
		}
	}
	return t
}

// eviction describes a dirty victim.
type eviction struct {
	local   uint64
	sectors uint64 // dirty mask
	class   Class
	warm    uint64 // of sectors, those the warm pass left dirty (tagEntry.warm)
}

// split is a line's set and tag (its index over the sets, + 1).
func (t *tagArray) split(local uint64) (set int, tag uint64) {
	if t.pow2 {
		return int(local & (uint64(t.sets) - 1)), local>>t.shift + 1
	}
	return int(local % uint64(t.sets)), local/uint64(t.sets) + 1
}

// tagAt is entry e's tag (0: invalid).
func (t *tagArray) tagAt(e int) uint64 {
	if t.wide != nil {
		return t.wide[e]
	}
	return uint64(t.narrow[e])
}

// setTag stores entry e's tag, turning the store wide if it does not fit
// 32 bits.
func (t *tagArray) setTag(e int, tag uint64) {
	if t.wide == nil && tag > math.MaxUint32 {
		t.wide = make([]uint64, len(t.narrow))
		for i, v := range t.narrow {
			t.wide[i] = uint64(v)
		}
		t.narrow = nil
	}
	if t.wide != nil {
		t.wide[e] = tag
		return
	}
	t.narrow[e] = uint32(tag)
}

// lineOf is the line index of entry e's tag.
func (t *tagArray) lineOf(e int) uint64 {
	return (t.tagAt(e)-1)*uint64(t.sets) + uint64(e/t.ways)
}

// access looks up a line, fills the sectors in mask and returns the mask
// of sectors that missed. With write, the sectors become dirty and need no
// fill. A dirty victim is returned in ev (ev.sectors != 0).
func (t *tagArray) access(local, mask uint64, write bool, c Class) (
	miss uint64, ev eviction) {
	t.clock++
	set, tag := t.split(local)
	base := set * t.ways
	e := t.find(base, tag)
	if e < 0 {
		e = t.victim(base)
		if v := &t.dirty[e]; t.tagAt(e) != 0 && v.dirty != 0 {
			ev = eviction{t.lineOf(e), v.dirty, Class(t.class[e]), v.warm}
		}
		t.setTag(e, tag)
		t.entry[e] = tagEntry{}
		t.dirty[e] = tagDirty{}
	}
	t.last = e
	t.stamp[e] = t.clock
	en := &t.entry[e]
	miss = mask &^ en.valid
	en.valid |= mask
	if write {
		d := &t.dirty[e]
		d.dirty |= mask
		d.warm &^= mask
		t.class[e] = uint8(c)
	}
	return miss, ev
}

// markWarm records that the dirty sectors in mask of the last accessed
// line were left by the warm pass, not by the running kernel.
func (t *tagArray) markWarm(mask uint64) {
	d := &t.dirty[t.last]
	d.warm |= mask & d.dirty
}

// find is the entry of set base holding tag, or -1.
func (t *tagArray) find(base int, tag uint64) int {
	if t.wide != nil {
		for i, v := range t.wide[base : base+t.ways] {
			if v == tag {
				return base + i
			}
		}
		return -1
	}
	if tag > math.MaxUint32 {
		return -1 // no narrow tag holds it
	}
	k := uint32(tag)
	for i, v := range t.narrow[base : base+t.ways] {
		if v == k {
			return base + i
		}
	}
	return -1
}

// victim is an invalid way if there is one, else the least recently used.
func (t *tagArray) victim(base int) int {
	v := base
	for w := base; w < base+t.ways; w++ {
		if t.tagAt(w) == 0 {
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
	for e := range t.entry {
		if d := &t.dirty[e]; t.tagAt(e) != 0 && d.dirty != 0 {
			fn(eviction{t.lineOf(e), d.dirty, Class(t.class[e]), d.warm})
			d.dirty, d.warm = 0, 0
		}
	}
}
