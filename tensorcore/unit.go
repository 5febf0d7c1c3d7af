package tensorcore

import (
	"fmt"
	"strings"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// Request is a run of Count independent MMAs of the configured dense or
// sparse shape of one precision, issued back to back by one warp.
type Request struct {
	Mode      Mode
	Precision Precision
	Count     int // >= 1
	// Issued, if set, runs at the cycle the run's last MMA issues (the
	// warp may go on).
	Issued func(cycle uint64)
	// Done, if set, runs at the cycle the run's last result is written
	// back.
	Done func(cycle uint64)
}

// ModeStats counts the work of one datapath.
type ModeStats struct {
	Instructions uint64
	// BusyCycles is issue-slot occupancy: issue interval x instructions.
	BusyCycles uint64
	// ActualFMAs counts multiplies performed (a sparse MMA skips half).
	ActualFMAs uint64
	// DenseEquivFMAs counts the FMAs of the logical (uncompressed) shape.
	DenseEquivFMAs uint64
}

func (s *ModeStats) add(o ModeStats) {
	s.Instructions += o.Instructions
	s.BusyCycles += o.BusyCycles
	s.ActualFMAs += o.ActualFMAs
	s.DenseEquivFMAs += o.DenseEquivFMAs
}

// Stats are a unit's totals and the split by datapath.
type Stats struct {
	ModeStats
	Dense, Sparse ModeStats
}

// Stage is one pipeline stage of a datapath.
type Stage struct {
	Name   string
	Cycles int
}

// path is the timing of one precision on one datapath.
type path struct {
	interval uint64
	latency  uint64
	stages   []Stage
	perMMA   ModeStats // the counts of one instruction
}

// HookPosIssue and HookPosComplete mark, for hooks on a Unit, an MMA
// issuing and its result being written back (Item is a HookItem). In
// batched fidelity they fire once per run, with the run's last MMA.
var (
	HookPosIssue    = &akita.HookPos{Name: "TCIssue"}
	HookPosComplete = &akita.HookPos{Name: "TCComplete"}
)

// HookItem describes the MMA a hook fires for.
type HookItem struct {
	Mode      Mode
	Precision Precision
	Cycle     uint64
	Count     int // MMAs the event stands for (1 in instruction fidelity)
}

// Unit is the tensor core of one SM sub-partition, as an Akita component.
//
// It is event-driven rather than ticking: between requests nothing
// happens, and a ticking component would spend one event per cycle on an
// idle or steadily issuing unit. Requests are served in FIFO order; a run
// starts at max(submit cycle, the cycle the issue slot frees), its MMAs
// issue every issue_interval cycles, and each result is ready latency
// cycles after its issue. In batched fidelity a run is one computation
// plus its callback events. In instruction fidelity every MMA is issued
// into a pipeline and moved through its stages (for sparse, metadata
// decode and selector mux in front of the dot-product array) to write
// back; the pipeline steps only at cycles where an MMA issues or leaves a
// stage. Both give the same cycles by construction, and the tests check
// it.
type Unit struct {
	*akita.ComponentBase
	engine  akita.Engine
	clock   clock.Clock
	batched bool
	paths   map[Precision][2]*path

	freeAt uint64 // first cycle the issue slot is free
	stats  Stats

	// instruction fidelity
	queue []*run          // runs not fully issued, FIFO
	pipe  []*inflight     // MMAs in the pipeline, in issue order
	wakes map[uint64]bool // cycles a step event is scheduled for
}

type run struct {
	req  Request
	path *path
	left int
}

// Builder builds Units (Akita builder style).
type Builder struct {
	engine akita.Engine
	freq   akita.Freq
	cfg    Config
}

// MakeBuilder returns a builder with a 1 GHz clock.
func MakeBuilder() Builder { return Builder{freq: 1 * akita.GHz} }

// WithEngine sets the engine.
func (b Builder) WithEngine(e akita.Engine) Builder { b.engine = e; return b }

// WithFreq sets the clock.
func (b Builder) WithFreq(f akita.Freq) Builder { b.freq = f; return b }

// WithConfig sets the tensor-core parameters.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// Build makes the unit. The config must be valid (configs.Load validates
// it); an invalid one, a missing engine or an invalid Akita name is a
// programming error and panics.
func (b Builder) Build(name string) *Unit {
	if b.engine == nil {
		panic("tensorcore: Builder needs WithEngine")
	}
	if l := b.cfg.Validate(); len(l) > 0 {
		msgs := make([]string, len(l))
		for i, e := range l {
			msgs[i] = e.Error()
		}
		panic("tensorcore: invalid config: " + strings.Join(msgs, "; "))
	}
	akita.NameMustBeValid(name)
	u := &Unit{
		ComponentBase: akita.NewComponentBase(name),
		engine:        b.engine,
		clock:         clock.Clock{Freq: b.freq},
		batched:       b.cfg.Fidelity != "instruction",
		paths:         map[Precision][2]*path{},
		wakes:         map[uint64]bool{},
	}
	for _, n := range Precisions {
		p, _ := b.cfg.Get(n)
		u.paths[n] = [2]*path{densePath(p), sparsePath(p)}
	}
	return u
}

func densePath(p *PrecisionConfig) *path {
	return newPath(p.DenseShape, p.DenseIssueInterval, p.DenseLatency,
		DenseStages(p), Pattern{N: 1, M: 1})
}

func sparsePath(p *PrecisionConfig) *path {
	pat, _ := ParsePattern(p.SparsePattern)
	return newPath(p.SparseShape, p.SparseIssueInterval, p.SparseLatency,
		SparseStages(p), pat)
}

// newPath is a datapath of instruction shape sh issuing one MMA per
// interval; it multiplies the kept share pat.N/pat.M of the shape's FMAs.
func newPath(sh string, interval, latency int, stages []Stage, pat Pattern) *path {
	shape, _ := ParseShape(sh)
	fmas := uint64(shape.FMAs())
	return &path{
		interval: uint64(interval),
		latency:  uint64(latency),
		stages:   stages,
		perMMA: ModeStats{Instructions: 1, BusyCycles: uint64(interval),
			ActualFMAs: fmas * uint64(pat.N) / uint64(pat.M), DenseEquivFMAs: fmas},
	}
}

var dotStageNames = []string{"operand read", "multiply", "add tree", "accumulate"}

// DenseStages splits dense_latency over dense_stages (earlier stages take
// the remainder): the operand read and the dot-product array.
func DenseStages(p *PrecisionConfig) []Stage {
	return split(p.DenseLatency, p.DenseStages, func(i int) string {
		if p.DenseStages == len(dotStageNames) {
			return dotStageNames[i]
		}
		return fmt.Sprintf("dot-product stage %d", i)
	})
}

// SparseStages is the sparse datapath: the dense stages with the extra
// sparse_stages - dense_stages stages (metadata decode, selector mux)
// inserted after the operand read, taking sparse_latency - dense_latency
// cycles. When the extra latency cannot give each extra stage a cycle,
// sparse_latency is split evenly over sparse_stages instead.
func SparseStages(p *PrecisionConfig) []Stage {
	extra := p.SparseStages - p.DenseStages
	extraCycles := p.SparseLatency - p.DenseLatency
	if extra < 1 || extraCycles < extra {
		return split(p.SparseLatency, p.SparseStages, func(i int) string {
			return fmt.Sprintf("sparse stage %d", i)
		})
	}
	front := split(extraCycles, extra, func(i int) string {
		if extra == 2 {
			return []string{"metadata decode", "selector mux"}[i]
		}
		return fmt.Sprintf("metadata/mux stage %d", i)
	})
	dense := DenseStages(p)
	out := append([]Stage{dense[0]}, front...)
	return append(out, dense[1:]...)
}

func split(cycles, n int, name func(int) string) []Stage {
	out := make([]Stage, n)
	for i := range out {
		out[i] = Stage{Name: name(i), Cycles: cycles / n}
		if i < cycles%n {
			out[i].Cycles++
		}
	}
	return out
}

// Check says whether the unit can serve r.
func (u *Unit) Check(r Request) error {
	if _, ok := u.paths[r.Precision]; !ok {
		return fmt.Errorf("%s: unknown precision %v", u.Name(), r.Precision)
	}
	if r.Mode != Dense && r.Mode != Sparse {
		return fmt.Errorf("%s: unknown mode %d", u.Name(), r.Mode)
	}
	if r.Count < 1 {
		return fmt.Errorf("%s: request of %d MMAs", u.Name(), r.Count)
	}
	return nil
}

// Submit queues a run at cycle now (the current cycle of u's clock). The
// callbacks run from u's own events. A request Check rejects is a
// programming error and panics.
func (u *Unit) Submit(now uint64, r Request) {
	if err := u.Check(r); err != nil {
		panic(err)
	}
	p := u.paths[r.Precision][r.Mode]
	if u.batched {
		u.submitBatched(now, r, p)
		return
	}
	u.queue = append(u.queue, &run{req: r, path: p, left: r.Count})
	u.wakeAt(max(now, u.freeAt))
}

func (u *Unit) submitBatched(now uint64, r Request, p *path) {
	start := max(now, u.freeAt)
	n := uint64(r.Count)
	last := start + (n-1)*p.interval
	u.freeAt = start + n*p.interval
	done := last + p.latency
	u.count(r.Mode, p, n)
	u.hook(HookPosIssue, r, last, r.Count)
	if r.Issued != nil {
		u.at(last, func() { r.Issued(last) })
	}
	if r.Done == nil && u.NumHooks() == 0 {
		return // nobody to tell
	}
	u.at(done, func() {
		u.hook(HookPosComplete, r, done, r.Count)
		if r.Done != nil {
			r.Done(done)
		}
	})
}

// inflight is one MMA in the pipeline (instruction fidelity).
type inflight struct {
	run   *run
	last  bool   // the run's last MMA
	stage int    // index into run.path.stages
	until uint64 // cycle it leaves its stage
}

// wakeAt makes sure the pipeline steps at cycle c.
func (u *Unit) wakeAt(c uint64) {
	if u.wakes[c] {
		return
	}
	u.wakes[c] = true
	u.at(c, func() { u.step(c) })
}

// step moves the pipeline at cycle now: every MMA whose stage ends now
// moves to its next stage (or writes back), then the next MMA issues if
// the issue slot is free. The order drains before it fills, so an MMA
// never meets the one behind it; the next step is scheduled at the next
// cycle where a stage ends or the slot frees, so idle cycles cost nothing.
func (u *Unit) step(now uint64) {
	u.advance(now)
	u.issue(now)
	delete(u.wakes, now)
	next, ok := uint64(0), false
	for _, m := range u.pipe {
		if !ok || m.until < next {
			next, ok = m.until, true
		}
	}
	if len(u.queue) > 0 && (!ok || u.freeAt < next) {
		next, ok = max(u.freeAt, now), true
	}
	if ok {
		u.wakeAt(next)
	}
}

func (u *Unit) advance(now uint64) {
	kept := u.pipe[:0]
	var done []*inflight
	for _, m := range u.pipe {
		if m.until == now {
			m.stage++
			if m.stage == len(m.run.path.stages) {
				done = append(done, m)
				continue
			}
			m.until += uint64(m.run.path.stages[m.stage].Cycles)
		}
		kept = append(kept, m)
	}
	u.pipe = kept
	for _, m := range done { // callbacks last: they may Submit
		u.hook(HookPosComplete, m.run.req, now, 1)
		if m.last && m.run.req.Done != nil {
			m.run.req.Done(now)
		}
	}
}

func (u *Unit) issue(now uint64) {
	if len(u.queue) == 0 || u.freeAt > now {
		return
	}
	head := u.queue[0]
	head.left--
	last := head.left == 0
	u.count(head.req.Mode, head.path, 1)
	u.hook(HookPosIssue, head.req, now, 1)
	u.freeAt = now + head.path.interval
	u.pipe = append(u.pipe, &inflight{run: head, last: last,
		until: now + uint64(head.path.stages[0].Cycles)})
	if last {
		u.queue = u.queue[1:]
		if head.req.Issued != nil {
			head.req.Issued(now)
		}
	}
}

func (u *Unit) count(m Mode, p *path, n uint64) {
	s := ModeStats{Instructions: n * p.perMMA.Instructions, BusyCycles: n * p.perMMA.BusyCycles,
		ActualFMAs: n * p.perMMA.ActualFMAs, DenseEquivFMAs: n * p.perMMA.DenseEquivFMAs}
	u.stats.ModeStats.add(s)
	if m == Sparse {
		u.stats.Sparse.add(s)
	} else {
		u.stats.Dense.add(s)
	}
}

func (u *Unit) hook(pos *akita.HookPos, r Request, cycle uint64, count int) {
	if u.NumHooks() == 0 {
		return
	}
	u.InvokeHook(akita.HookCtx{Domain: u, Pos: pos,
		Item: HookItem{Mode: r.Mode, Precision: r.Precision, Cycle: cycle, Count: count}})
}

// at schedules fn at cycle c (never before the engine's present).
func (u *Unit) at(c uint64, fn func()) {
	t := u.clock.Time(c)
	if now := u.engine.CurrentTime(); t < now {
		t = now
	}
	u.engine.Schedule(clock.NewEvent(t, u, fn))
}

// Handle runs the unit's own callback events.
func (u *Unit) Handle(e akita.Event) error {
	ev, ok := e.(*clock.Event)
	if !ok {
		return fmt.Errorf("%s: unexpected event %T", u.Name(), e)
	}
	ev.Fn()
	return nil
}

// NotifyRecv is unused: the unit has no ports (the SM calls Submit).
func (u *Unit) NotifyRecv(akita.VTimeInSec, akita.Port) {}

// NotifyPortFree is unused: the unit has no ports.
func (u *Unit) NotifyPortFree(akita.VTimeInSec, akita.Port) {}

// Stats returns the counts so far (final once the engine has drained).
func (u *Unit) Stats() Stats { return u.stats }

// Stages returns the pipeline stages of a precision's datapath.
func (u *Unit) Stages(precision Precision, m Mode) ([]Stage, error) {
	p, ok := u.paths[precision]
	if !ok || (m != Dense && m != Sparse) {
		return nil, fmt.Errorf("%s: no datapath %s %s", u.Name(), precision, m)
	}
	return append([]Stage(nil), p[m].stages...), nil
}
