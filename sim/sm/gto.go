package sm

// gto is greedy-then-oldest: each scheduler offers the slot first to the
// warp it issued from last, then to its other warps oldest first.
type gto struct {
	last [maxSchedulers]*Warp // each scheduler's last-issuing warp
}

func (p *gto) order(sp *SubPartition, s int) walk {
	g := p.last[s]
	if g == nil || g.section >= 3 || g.SP != sp || g.sched != s {
		g = nil
	}
	return walk{first: g, n: len(sp.warps)}
}

func (p *gto) issued(s int, w *Warp) { p.last[s] = w }

func (p *gto) byAge() bool { return true }
