package gpu

// straggler is the SM that finished the kernel's CTAs last, if it ran on
// after every other SM had finished: its CTAs still running then, and
// for how long it ran alone. Where the last CTAs land decides it (a tail
// CTA alone on an SM, or two sharing one, docs/sm.md), and one cycle of
// a parameter can move it, so the record says so when it is large.
type straggler struct {
	SM    int
	CTAs  int
	Alone uint64 // cycles after the second-latest SM's last CTA finished
}

// straggler finds the kernel's straggler among the SMs that ran CTAs;
// alone is 0 when fewer than two did.
// Its cycles are the kernel's: with the steady-state fast-forward, the
// time left out before a finish counts (fastForward.reported).
func (g *GPU) straggler() straggler {
	last, second := -1, uint64(0)
	ran := 0
	at := g.ff.reported
	for i, sm := range g.sms {
		if len(sm.Finishes) == 0 {
			continue
		}
		ran++
		switch {
		case last < 0 || sm.LastFinish > g.sms[last].LastFinish:
			if last >= 0 {
				second = max(second, at(g.sms[last].LastFinish))
			}
			last = i
		default:
			second = max(second, at(sm.LastFinish))
		}
	}
	if ran < 2 {
		return straggler{SM: last}
	}
	s := straggler{SM: last, Alone: at(g.sms[last].LastFinish) - second}
	for _, f := range g.sms[last].Finishes {
		if at(f) > second {
			s.CTAs++
		}
	}
	return s
}

// stragglerShare is how much of a kernel one SM must run alone for its
// record to name it (Straggler, and a note).
const StragglerShare = 0.02
