package sm

// lrr is loose round-robin: each scheduler starts its walk over the
// resident warps one past where its previous walk started.
type lrr struct {
	next []int // each scheduler's next start
}

func (p *lrr) order(sp *SubPartition, s int, buf []*Warp) []*Warp {
	n := len(sp.warps)
	start := p.next[s]
	p.next[s] = (start + 1) % max(1, n)
	for i := 0; i < n; i++ {
		if w := sp.warps[(start+i)%n]; w.sched == s {
			buf = append(buf, w)
		}
	}
	return buf
}

func (p *lrr) issued(int, *Warp) {}

func (p *lrr) byAge() bool { return false }
