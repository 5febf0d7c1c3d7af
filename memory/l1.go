package memory

import (
	"math/bits"
)

// l1Model is the per-SM L1 data caches, shared by both granularities: a
// sectored tag store per SM (nil when the carve-out leaves no L1) and a
// busy-until server per SM at l1.bytes_per_clk.
type l1Model struct {
	tags     []*tagArray
	srv      []server
	lat      float64
	secBytes float64
}

func newL1Model(p params) l1Model {
	m := l1Model{tags: make([]*tagArray, p.numSMs),
		srv: newServers(p.numSMs, p.l1Rate), lat: p.l1Lat,
		secBytes: float64(p.secBytes)}
	if p.l1Sets > 0 {
		for i := range m.tags {
			m.tags[i] = newTagArray(p.l1Sets, p.l1Ways)
		}
	}
	return m
}

// load serves a line's sectors through SM sm's L1 at cycle now. It
// returns when the L1 part is done and the sectors that missed (to be
// fetched from L2), and counts the traffic in st.
func (m *l1Model) load(now float64, sm int, c Class, s lineSpan,
	st *Stats) (finish float64, miss uint64) {
	n := uint64(bits.OnesCount64(s.mask))
	bytes := float64(n) * m.secBytes
	st.L1Bytes += uint64(bytes)
	st.PerClass[c].L1Bytes += uint64(bytes)
	_, end := m.srv[sm].reserve(now, bytes)
	finish = end + m.lat
	miss = s.mask
	if t := m.tags[sm]; t != nil {
		miss, _ = t.access(s.line, s.mask, false, c)
	}
	nMiss := uint64(bits.OnesCount64(miss))
	st.L1MissSectors += nMiss
	st.L1HitSectors += n - nMiss
	return finish, miss
}
