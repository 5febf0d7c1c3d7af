package memory

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// refLine is a line of refCache.
type refLine struct {
	local, valid, dirty, used uint64
	class                     Class
}

// refCache is a set-associative sectored cache with true LRU written the
// plain way: each set a list of its lines.
type refCache struct {
	sets, ways int
	set        [][]refLine
	clock      uint64
}

func (r *refCache) access(local, mask uint64, write bool, c Class) (miss uint64, ev eviction) {
	r.clock++
	set := &r.set[local%uint64(r.sets)]
	i := -1
	for j := range *set {
		if (*set)[j].local == local {
			i = j
		}
	}
	if i < 0 {
		if len(*set) == r.ways {
			v := 0
			for j := range *set {
				if (*set)[j].used < (*set)[v].used {
					v = j
				}
			}
			if old := (*set)[v]; old.dirty != 0 {
				ev = eviction{local: old.local, sectors: old.dirty, class: old.class}
			}
			*set = append((*set)[:v], (*set)[v+1:]...)
		}
		*set = append(*set, refLine{local: local})
		i = len(*set) - 1
	}
	ln := &(*set)[i]
	ln.used = r.clock
	miss = mask &^ ln.valid
	ln.valid |= mask
	if write {
		ln.dirty |= mask
		ln.class = c
	}
	return miss, ev
}

// TestTagArrayMatchesReference holds the tag array (flat tags, entries
// and LRU stamps) to refCache on random accesses, reads and writes,
// over a few lines more than the sets hold, on one set and on several
// (a power of two and not): the first half of the accesses to lines
// below 2^20 (32-bit tags), the second to those and to line indices
// beyond 32 bits (pairs a-1 and (b<<32 | a^b)-1), which turn the store's
// tags wide while it holds lines; the dirty lines left are cleaned as
// the reference holds them.
func TestTagArrayMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, geo := range []struct{ sets, ways int }{{1, 4}, {2, 4}, {4, 16}, {3, 4}, {6, 16}} {
		tags := newTagArray(geo.sets, geo.ways)
		ref := &refCache{sets: geo.sets, ways: geo.ways, set: make([][]refLine, geo.sets)}
		var locals []uint64
		for len(locals) < 6*geo.sets*geo.ways {
			a, b := uint64(1+rng.IntN(1<<20)), uint64(1+rng.IntN(1<<20))
			locals = append(locals, a-1, (b<<32|(a^b))-1)
		}
		for i := 0; i < 20000; i++ {
			local := locals[rng.IntN(len(locals))]
			if i < 10000 {
				local = locals[2*rng.IntN(len(locals)/2)]
			}
			mask := uint64(1+rng.IntN(15)) << rng.IntN(2)
			write := rng.IntN(3) == 0
			c := Class(rng.IntN(int(NumClasses)))
			gotMiss, gotEv := tags.access(local, mask, write, c)
			wantMiss, wantEv := ref.access(local, mask, write, c)
			if gotMiss != wantMiss || gotEv != wantEv {
				t.Fatalf("%dx%d, access %d (line %#x): miss %b, eviction %+v; want %b, %+v",
					geo.sets, geo.ways, i, local, gotMiss, gotEv, wantMiss, wantEv)
			}
		}
		want := map[eviction]bool{}
		for _, set := range ref.set {
			for _, ln := range set {
				if ln.dirty != 0 {
					want[eviction{local: ln.local, sectors: ln.dirty, class: ln.class}] = true
				}
			}
		}
		got := map[eviction]bool{}
		tags.cleanAll(func(ev eviction) { got[ev] = true })
		if !maps.Equal(got, want) {
			t.Errorf("%dx%d: cleaned %v, want the dirty lines %v", geo.sets, geo.ways, got, want)
		}
	}
}
