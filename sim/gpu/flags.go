package gpu

// flags are the kernel's flags in global memory (serial split-K's tile
// semaphores, stream-K's peer barriers), as the L2 holds them: the SMs'
// polls read them and their signals change them, each at the cycle its
// request reaches the L2 (sm.Flags). All start at 0, as CUTLASS's host
// code clears the workspace before the launch.
type flags map[int]int

// Value is part of sm.Flags.
func (f flags) Value(i int) int { return f[i] }

// Set is part of sm.Flags.
func (f flags) Set(i, v int) { f[i] = v }

// Add is part of sm.Flags.
func (f flags) Add(i, v int) { f[i] += v }

// tailCycles is how long the kernel ran with some SM idle for good: from
// the first SM's last CTA finishing (the launch, for an SM that ran
// none) to the kernel's end. Data-parallel kernels of a partial last wave
// spend that wave's time here; stream-K's even shares shrink it.
func (g *GPU) tailCycles() uint64 {
	first := g.EndCycle
	for _, s := range g.sms {
		at := g.startedAt
		if len(s.Finishes) > 0 {
			at = s.LastFinish
		}
		first = min(first, at)
	}
	return g.ff.reported(g.EndCycle) - g.ff.reported(first)
}
