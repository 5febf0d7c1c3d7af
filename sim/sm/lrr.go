package sm

// lrr is loose round-robin: each scheduler starts its walk over the
// resident warps one past where its previous walk started.
type lrr struct {
	next []int // each scheduler's next start
}

func (p *lrr) order(sp *SubPartition, s int) walk {
	n := len(sp.warps)
	start := p.next[s]
	p.next[s] = (start + 1) % max(1, n)
	return walk{start: start, n: n}
}

func (p *lrr) issued(int, *Warp) {}

func (p *lrr) byAge() bool { return false }
