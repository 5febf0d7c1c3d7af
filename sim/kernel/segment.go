package kernel

import "github.com/stcsim/stcsim/sim/internal/isa"

// Segment is one output tile's run of k-steps that a CTA computes, and
// what its epilogue does with the accumulators: a data-parallel or split-K
// CTA has one segment, a stream-K CTA one per tile its share of the
// MAC-loop iterations touches, in the order it runs them.
type Segment struct {
	Batch, TileM, TileN int
	// Split is the split-K index (0 for the other schedules): the plane
	// of the parallel split-K workspace the segment writes.
	Split  int
	KStart int // the tile's first k-step the segment runs
	Steps  int // k-steps it runs
	Epi    Epilogue
}

// Source is what an epilogue reads and adds to its accumulators.
type Source uint8

const (
	// SourceC: the GEMM's C (beta != 0).
	SourceC Source = 1 << iota
	// SourceD: D as the previous split left it (serial split-K: every
	// split after the first adds to the D its predecessor wrote).
	SourceD
	// SourcePartials: a tile's FP32 partial sums in the stream-K
	// workspace, as the earlier peers left them.
	SourcePartials
)

// Dest is where an epilogue stores.
type Dest uint8

const (
	DestD        Dest = iota // D, in the output type
	DestSplitK               // the parallel split-K workspace (FP32, a plane per split)
	DestPartials             // the stream-K partials workspace (FP32)
)

// Epilogue is what a segment's epilogue does around the default
// epilogue's conversion and stores: wait until a flag in global memory
// holds a value (Wait >= 0; CUTLASS's Semaphore::wait and
// Barrier::wait_eq, polled by one thread), read and add a source, store
// to a destination, then signal the flag (Signal: set it to Value, or add
// one; CUTLASS's Semaphore::release and Barrier::arrive_inc) once the
// stores are visible.
type Epilogue struct {
	Wait   int // flag value waited for; -1: none
	Flag   int // the flag: a tile's semaphore, or the first peer's barrier
	Source Source
	Dest   Dest
	Signal Signal
	Value  int // the value Signal sets (SignalSet)
}

// Signal is how an epilogue updates its flag after its stores.
type Signal uint8

const (
	SignalNone Signal = iota
	SignalSet         // st.release: the flag := Value
	SignalAdd         // red.release.add: the flag += 1
)

// Waits says whether the epilogue waits on its flag.
func (e Epilogue) Waits() bool { return e.Wait >= 0 }

// progKey names one warp's program variant: its epilogue's shape (what
// instructions it has; the flag and values are the CTA's, read when the
// instructions run) and whether the segment is the CTA's last (EXIT) or
// not (on to the next segment).
type progKey struct {
	warp   int
	waits  bool
	source Source
	dest   Dest
	signal bool
	last   bool
}

// plainEpilogue is the epilogue of a data-parallel CTA (C read when
// beta != 0) or of a parallel split-K one (FP32 partials, no C).
func (p *Plan) plainEpilogue() Epilogue {
	e := Epilogue{Wait: -1}
	switch {
	case p.Schedule == ParallelSplitK:
		e.Dest = DestSplitK
	case p.beta != 0:
		e.Source = SourceC
	}
	return e
}

// segments are CTA idx's segments: one for the data-parallel and
// split-K schedules, as the stream-K map gives them for stream-K.
func (p *Plan) segments(idx int) []Segment {
	if p.Schedule == StreamK {
		return p.streamK.segments(p, idx)
	}
	b, tm, tn, split := p.ctaCoord(idx)
	s := Segment{Batch: b, TileM: tm, TileN: tn, Split: split,
		KStart: split * p.splitSteps, Steps: p.stepsOf(split), Epi: p.plainEpilogue()}
	if p.Schedule == SerialSplitK {
		s.Epi = p.serialEpilogue(b, tm, tn, split)
	}
	return []Segment{s}
}

// serialEpilogue is split's epilogue in serial split-K, as CUTLASS's
// GemmUniversal runs it (kSplitKSerial): wait until the tile's semaphore
// holds the split's index (the first split waits for the 0 it starts
// at), add C (first split, beta != 0) or the D the previous split wrote,
// write D, and release the semaphore to the next index (the last split
// resets it to 0 for the next launch).
func (p *Plan) serialEpilogue(b, tm, tn, split int) Epilogue {
	e := Epilogue{Wait: split, Flag: (b*p.TilesM+tm)*p.TilesN + tn,
		Dest: DestD, Signal: SignalSet, Value: split + 1}
	if split == p.SplitK-1 {
		e.Value = 0
	}
	switch {
	case split > 0:
		e.Source = SourceD
	case p.beta != 0:
		e.Source = SourceC
	}
	return e
}

// ProgramFor is warp w's stream for a segment with epilogue e, the CTA's
// last segment or not.
func (p *Plan) ProgramFor(w int, e Epilogue, last bool) *isa.Program {
	if last && e == p.plainEpilogue() {
		return p.Program(w)
	}
	k := progKey{warp: w, waits: e.Waits(), source: e.Source, dest: e.Dest,
		signal: e.Signal != SignalNone, last: last}
	if p.variants == nil {
		p.variants = map[progKey]*isa.Program{}
	}
	if prog := p.variants[k]; prog != nil {
		return prog
	}
	prog := buildVariant(p, k)
	p.variants[k] = prog
	return prog
}
