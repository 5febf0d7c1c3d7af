package gpu

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/kernel"
)

// warmPasses is how much of the previous call's traffic, in L2 sizes,
// warmL2 replays (from the end): the L2 is LRU, so what a call leaves in
// it is decided by its last few L2-fulls of accesses.
const warmPasses = 4

// warmL2 brings the L2 to the state an identical call of the kernel just
// before left it in (kernel.l2_start: repeat): the tags of the lines it
// read and wrote, its output dirty, as a benchmark loop's next call finds
// them. It replays the previous call's accesses wave by wave, in the
// order the kernel makes them (every CTA of a wave k-step by k-step, then
// their epilogues), from the wave at which the rest of the call moves at
// least warmPasses L2 sizes (a smaller kernel: from its start). Nothing
// is counted: the lines the call finds in L2 are hits, and the dirty
// lines it evicts are written back within it, as on the hardware.
func (g *GPU) warmL2() error {
	w, ok := g.mem.(memory.Warmer)
	if !ok {
		return fmt.Errorf("kernel.l2_start=%s: the %s memory hierarchy cannot be preloaded",
			configs.L2Repeat, g.cfg.Sim.MemoryGranularity)
	}
	p := g.plan
	wave := max(1, min(p.CTAs, p.Occupancy*len(g.sms)))
	last := (p.CTAs - 1) / wave * wave
	per := ctaBytes(p)
	limit := uint64(warmPasses) * uint64(g.cfg.Memory.L2.SizeKB) * 1024
	first, moved := last, uint64(0)
	for ; first > 0; first -= wave {
		if moved += per * uint64(min(wave, p.CTAs-first)); moved >= limit {
			break
		}
	}
	for start := first; start < p.CTAs; start += wave {
		ctas := make([]kernel.CTA, 0, wave)
		for i := start; i < min(start+wave, p.CTAs); i++ {
			ctas = append(ctas, kernel.NewCTA(p, i))
		}
		warmWave(w, ctas)
	}
	return nil
}

// warmWave replays one wave's accesses: segment by segment, each
// segment's k-steps across the wave's CTAs, then their epilogues.
func warmWave(w memory.Warmer, ctas []kernel.CTA) {
	for seg := 0; ; seg++ {
		steps := -1
		for i := range ctas {
			if c := &ctas[i]; c.Seg == seg || (c.Seg == seg-1 && c.Advance()) {
				steps = max(steps, c.Steps)
			}
		}
		if steps < 0 {
			return
		}
		for k := 0; k < steps; k++ {
			for i := range ctas {
				if c := &ctas[i]; c.Seg == seg && k < c.Steps {
					for _, r := range c.Tiles(k) {
						w.Warm(r.Class, r.Region, false)
					}
				}
			}
		}
		for i := range ctas {
			if c := &ctas[i]; c.Seg == seg {
				reads, writes := c.EpilogueTiles()
				for _, r := range reads {
					w.Warm(r.Class, r.Region, false)
				}
				for _, r := range writes {
					w.Warm(r.Class, r.Region, true)
				}
			}
		}
	}
}

// ctaBytes is about how many bytes one CTA of p moves: its first CTA's
// k-step tiles times its k-steps, and its epilogue's tiles.
func ctaBytes(p *kernel.Plan) uint64 {
	c := kernel.NewCTA(p, 0)
	var step, epi uint64
	for _, r := range c.Tiles(0) {
		step += r.Region.Bytes()
	}
	reads, writes := c.EpilogueTiles()
	for _, r := range append(reads, writes...) {
		epi += r.Region.Bytes()
	}
	return step*uint64(c.Steps) + epi
}
