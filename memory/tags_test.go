package memory

import (
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
// over a few lines more than the sets hold, with line indices beyond 32
// bits (pairs a-1 and (b<<32 | a^b)-1), on one set and on several.
func TestTagArrayMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, geo := range []struct{ sets, ways int }{{1, 4}, {2, 4}, {4, 16}} {
		tags := newTagArray(geo.sets, geo.ways)
		ref := &refCache{sets: geo.sets, ways: geo.ways, set: make([][]refLine, geo.sets)}
		var locals []uint64
		for len(locals) < 6*geo.sets*geo.ways {
			a, b := uint64(1+rng.IntN(1<<20)), uint64(1+rng.IntN(1<<20))
			locals = append(locals, a-1, (b<<32|(a^b))-1)
		}
		for i := 0; i < 20000; i++ {
			local := locals[rng.IntN(len(locals))]
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
	}
}
