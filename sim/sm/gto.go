package sm

// gto is greedy-then-oldest: each scheduler offers the slot first to the
// warp it issued from last, then to its other warps oldest first.
type gto struct {
	last [maxSchedulers]*Warp // each scheduler's last-issuing warp
}

func (p *gto) order(sp *SubPartition, s int, buf []*Warp) []*Warp {
	g := p.last[s]
	if g != nil && g.section < 3 && g.SP == sp && g.sched == s {
		buf = append(buf, g)
	} else {
		g = nil
	}
	for _, w := range sp.warps {
		if w != g && w.sched == s {
			buf = append(buf, w)
		}
	}
	return buf
}

func (p *gto) issued(s int, w *Warp) { p.last[s] = w }

func (p *gto) byAge() bool { return true }
