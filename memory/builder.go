package memory

import (
	"fmt"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// Builder builds memory hierarchies (Akita builder style):
//
//	h, err := memory.MakeBuilder().WithEngine(e).WithFreq(f).
//		WithConfig(cfg).WithNumSMs(108).Build("Memory")
//
// Unlike the tensor-core builder, Build returns an error: the SM count and
// granularity come from the run config, so a bad value is the user's.
type Builder struct {
	engine      akita.Engine
	freq        akita.Freq
	cfg         Config
	numSMs      int
	granularity string
}

// MakeBuilder returns a builder of a fast hierarchy for one SM at 1 GHz.
func MakeBuilder() Builder {
	return Builder{freq: 1 * akita.GHz, numSMs: 1, granularity: Fast}
}

// WithEngine sets the engine.
func (b Builder) WithEngine(e akita.Engine) Builder { b.engine = e; return b }

// WithFreq sets the SM clock, the unit of every cycle count.
func (b Builder) WithFreq(f akita.Freq) Builder { b.freq = f; return b }

// WithConfig sets the memory sections.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithNumSMs sets the number of SMs (ports into the hierarchy).
func (b Builder) WithNumSMs(n int) Builder { b.numSMs = n; return b }

// WithGranularity selects "fast" (tile-granular bandwidth-and-latency
// model with a real tag model) or "detailed" (every line through Akita
// writeback caches and DRAM channel components).
func (b Builder) WithGranularity(g string) Builder { b.granularity = g; return b }

// Build makes the hierarchy; name prefixes the Akita names of its parts.
func (b Builder) Build(name string) (Hierarchy, error) {
	if b.engine == nil {
		return nil, fmt.Errorf("memory: Builder needs WithEngine")
	}
	if errs := b.cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("memory config: %v", errs[0])
	}
	if b.numSMs <= 0 {
		return nil, fmt.Errorf("memory: numSMs must be > 0 (got %d)", b.numSMs)
	}
	if b.freq <= 0 {
		return nil, fmt.Errorf("memory: clock frequency must be > 0")
	}
	clk := clock.Clock{Freq: b.freq}
	p := deriveParams(b.cfg, clk, b.numSMs)
	p.name = name
	switch b.granularity {
	case Fast, "":
		return newFast(b.engine, clk, p), nil
	case Detailed:
		return newDetailed(b.engine, clk, p), nil
	}
	return nil, fmt.Errorf("memory: granularity must be %s or %s (got %q)",
		Fast, Detailed, b.granularity)
}
