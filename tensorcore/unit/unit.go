package unit

import (
	"fmt"
	"strings"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/tensorcore"
)

// Request is a run of Count independent MMAs of one precision and mode,
// issued back to back by one warp.
type Request struct {
	Mode      tensorcore.Mode
	Precision tensorcore.Precision
	// Pattern is the N:M pattern of a sparse or dual-side run; the zero
	// value takes the precision's configured sparse_pattern.
	Pattern tensorcore.Pattern
	// Products is, for a dual-side run, the multiplies of each MMA (from
	// the intersection of the two operands' masks); 0 takes the
	// expectation for independent masks. Ignored otherwise.
	Products int
	Count    int // >= 1
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
	// ActualFMAs counts multiplies performed (a 2:4 MMA skips half).
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

// Stats are a unit's totals and the split by datapath (dual-side runs
// count under Sparse).
type Stats struct {
	ModeStats
	Dense, Sparse ModeStats
}

// pathKey names one derived datapath.
type pathKey struct {
	precision tensorcore.Precision
	mode      tensorcore.Mode
	pattern   tensorcore.Pattern
	products  int
}

// requestPath is what of a Request selects its datapath, as given.
type requestPath struct {
	precision tensorcore.Precision
	mode      tensorcore.Mode
	pattern   tensorcore.Pattern
	products  int
}

// path is a derived datapath plus the counts of one instruction.
type path struct {
	tensorcore.Datapath
	// Per stage, in cycles: the fill of the stages before it, and its own
	// occupancy and fill (Stages' numbers, side by side in the path: every
	// MMA an SM issues reads them).
	prefix, occupancy, fill [tensorcore.NumStages]uint64
	perMMA                  ModeStats
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
	Mode      tensorcore.Mode
	Precision tensorcore.Precision
	Cycle     uint64
	Count     int // MMAs the event stands for (1 in instruction fidelity)
}

// Unit is the tensor core of one SM sub-partition, as an Akita component.
//
// It is event-driven rather than ticking: between requests nothing
// happens. Requests are served in FIFO order. In batched fidelity a run
// is one computation: its MMAs issue every Interval cycles of their
// datapath from max(submit cycle, the cycle the issue slot frees) and each
// result is ready Latency cycles after its issue. In instruction fidelity
// every MMA moves through the five stages of the pipeline (operand read,
// metadata decode, selector mux, dot product, accumulate) as a structural
// hazard: each stage is held for the MMA's occupancy of it, an MMA issues
// only when its first data would reach every stage after that stage has
// taken the whole of the MMA ahead, and its result is written back when
// its last data has crossed the last stage. A run of one datapath gives
// the same cycles in both fidelities (the tests check it); they differ
// when consecutive MMAs take different datapaths, whose fills or
// bottleneck stages differ (docs/tensorcore.md).
type Unit struct {
	*akita.ComponentBase
	engine  akita.Engine
	clock   clock.Clock
	batched bool
	cfg     tensorcore.Config
	paths   map[pathKey]*path
	// last is the datapath of the last request, by the request's own
	// fields: an SM issuing one MMA at a time asks for the same one
	// every time.
	last struct {
		req  requestPath
		path *path
	}

	freeAt uint64 // batched: first cycle the issue slot is free
	stats  Stats

	// instruction fidelity
	queue []*run // runs not fully issued, FIFO
	// tail is, per stage, the cycle the last MMA has wholly entered it
	// (an array in the Unit: an SM's MMA issue reads it every time).
	tail    [tensorcore.NumStages]uint64
	pending bool // an issue event is scheduled
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
	cfg    tensorcore.Config
}

// MakeBuilder returns a builder with a 1 GHz clock.
func MakeBuilder() Builder { return Builder{freq: 1 * akita.GHz} }

// WithEngine sets the engine.
func (b Builder) WithEngine(e akita.Engine) Builder { b.engine = e; return b }

// WithFreq sets the clock.
func (b Builder) WithFreq(f akita.Freq) Builder { b.freq = f; return b }

// WithConfig sets the tensor-core parameters.
func (b Builder) WithConfig(c tensorcore.Config) Builder { b.cfg = c; return b }

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
	return &Unit{
		ComponentBase: akita.NewComponentBase(name),
		engine:        b.engine,
		clock:         clock.Clock{Freq: b.freq},
		batched:       b.cfg.Fidelity != "instruction",
		cfg:           b.cfg,
		paths:         map[pathKey]*path{},
	}
}

// key normalises a request to the datapath it runs on.
func (u *Unit) key(r Request) (pathKey, error) {
	k := pathKey{precision: r.Precision, mode: r.Mode}
	p, err := u.cfg.Get(r.Precision)
	if err != nil {
		return k, fmt.Errorf("%s: %w", u.Name(), err)
	}
	switch r.Mode {
	case tensorcore.Dense:
		return k, nil
	case tensorcore.Sparse, tensorcore.DualSide:
	default:
		return k, fmt.Errorf("%s: unknown mode %d", u.Name(), r.Mode)
	}
	k.pattern = r.Pattern
	if k.pattern == (tensorcore.Pattern{}) {
		k.pattern = p.Pattern()
	}
	if r.Mode == tensorcore.DualSide {
		k.products = max(r.Products, 0)
	}
	return k, nil
}

// Path returns the derived datapath a request runs on.
func (u *Unit) Path(r Request) (tensorcore.Datapath, error) {
	p, err := u.path(r)
	if err != nil {
		return tensorcore.Datapath{}, err
	}
	return p.Datapath, nil
}

func (u *Unit) path(r Request) (*path, error) {
	rp := requestPath{r.Precision, r.Mode, r.Pattern, r.Products}
	if u.last.path != nil && u.last.req == rp {
		return u.last.path, nil
	}
	p, err := u.lookup(r)
	if err != nil {
		return nil, err
	}
	u.last.req, u.last.path = rp, p
	return p, nil
}

// lookup finds (or derives and keeps) the datapath r runs on.
func (u *Unit) lookup(r Request) (*path, error) {
	k, err := u.key(r)
	if err != nil {
		return nil, err
	}
	if p, ok := u.paths[k]; ok {
		return p, nil
	}
	prec, _ := u.cfg.Get(k.precision)
	d, err := tensorcore.Derive(prec, k.precision, k.mode, k.pattern, k.products)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Name(), err)
	}
	p := &path{Datapath: d, perMMA: ModeStats{Instructions: 1,
		BusyCycles: uint64(d.Interval), ActualFMAs: uint64(d.Products),
		DenseEquivFMAs: uint64(d.Shape.FMAs())}}
	var f uint64
	for i, s := range d.Stages {
		p.prefix[i] = f
		p.occupancy[i], p.fill[i] = uint64(s.Occupancy), uint64(s.Fill)
		f += p.fill[i]
	}
	u.paths[k] = p
	return p, nil
}

// Check says whether the unit can serve r.
func (u *Unit) Check(r Request) error {
	if r.Count < 1 {
		return fmt.Errorf("%s: request of %d MMAs", u.Name(), r.Count)
	}
	_, err := u.path(r)
	return err
}

// Submit queues a run at cycle now (the current cycle of u's clock). The
// callbacks run from u's own events. A request Check rejects is a
// programming error and panics.
func (u *Unit) Submit(now uint64, r Request) {
	if err := u.Check(r); err != nil {
		panic(err)
	}
	p, _ := u.path(r)
	if u.batched {
		u.submitBatched(now, r, p)
		return
	}
	u.queue = append(u.queue, &run{req: r, path: p, left: r.Count})
	if !u.pending {
		u.scheduleIssue(now)
	}
}

func (u *Unit) submitBatched(now uint64, r Request, p *path) {
	start := max(now, u.freeAt)
	n := uint64(r.Count)
	interval := uint64(p.Interval)
	last := start + (n-1)*interval
	u.freeAt = start + n*interval
	done := last + uint64(p.Latency)
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

// earliest is the first cycle at or after now that an MMA of p can issue
// without meeting, at any stage, the MMA ahead of it: its first data
// reaches stage s prefix[s] cycles after issue, and stage s is free once
// the MMA ahead has wholly entered it.
func (u *Unit) earliest(now uint64, p *path) uint64 {
	t := now
	for s, busy := range &u.tail {
		if busy > p.prefix[s] {
			t = max(t, busy-p.prefix[s])
		}
	}
	return t
}

// scheduleIssue schedules the issue of the head of the queue.
func (u *Unit) scheduleIssue(now uint64) {
	t := u.earliest(now, u.queue[0].path)
	u.pending = true
	u.at(t, func() { u.issue(t) })
}

// issue moves the head MMA into the pipeline at cycle now: per stage, its
// first data enters at now + prefix, and it has wholly entered once the
// stage has had its occupancy and its last data has arrived from the
// stage before; it is written back when its last data crosses the last
// stage.
func (u *Unit) issue(now uint64) {
	u.pending = false
	head := u.queue[0]
	p := head.path
	done := u.enter(now, p)
	head.left--
	last := head.left == 0
	u.count(head.req.Mode, p, 1)
	u.hook(HookPosIssue, head.req, now, 1)
	if last {
		u.queue = u.queue[1:]
	}
	if last || u.NumHooks() > 0 {
		r := head.req
		u.at(done, func() {
			u.hook(HookPosComplete, r, done, 1)
			if last && r.Done != nil {
				r.Done(done)
			}
		})
	}
	if last && head.req.Issued != nil {
		head.req.Issued(now) // may Submit
	}
	if len(u.queue) > 0 && !u.pending {
		u.scheduleIssue(now)
	}
}

// FreeAt is the first cycle at or after now at which one MMA of r's
// datapath (r.Count is ignored) can issue: in batched fidelity when the
// issue slot frees, in instruction fidelity when no stage ahead of it is
// still held (see Unit). For an SM that issues MMAs one by one with
// Issue; do not mix with queued Submit runs on the same unit.
func (u *Unit) FreeAt(now uint64, r Request) (uint64, error) {
	p, err := u.path(r)
	if err != nil {
		return 0, err
	}
	if u.batched {
		return max(now, u.freeAt), nil
	}
	return u.earliest(now, p), nil
}

// Issue issues one MMA of r's datapath at the cycle FreeAt(now, r) gives
// and returns that cycle and the cycle its result is written back. Stats
// and hooks count it as Submit would; r's callbacks are not used.
func (u *Unit) Issue(now uint64, r Request) (issued, done uint64, err error) {
	p, err := u.path(r)
	if err != nil {
		return 0, 0, err
	}
	r.Count = 1
	if u.batched {
		issued = max(now, u.freeAt)
		u.freeAt = issued + uint64(p.Interval)
		done = issued + uint64(p.Latency)
	} else {
		issued = u.earliest(now, p)
		done = u.enter(issued, p)
	}
	u.count(r.Mode, p, 1)
	if u.NumHooks() > 0 {
		u.hookIssue(r, issued, done)
	}
	return issued, done, nil
}

// hookIssue tells the hooks of one issued MMA now and of its write-back
// at done. It is apart from Issue so that only a hooked run copies r to
// the heap for the closure.
func (u *Unit) hookIssue(r Request, issued, done uint64) {
	u.hook(HookPosIssue, r, issued, 1)
	u.at(done, func() { u.hook(HookPosComplete, r, done, 1) })
}

// enter moves one MMA of p into the pipeline at cycle now and returns its
// write-back cycle (see issue).
func (u *Unit) enter(now uint64, p *path) uint64 {
	var prev uint64 // when the last data leaves the previous stage
	for s := range p.Stages {
		in := max(now+p.prefix[s]+p.occupancy[s], prev)
		u.tail[s] = in
		prev = in + p.fill[s]
	}
	return prev
}

func (u *Unit) count(m tensorcore.Mode, p *path, n uint64) {
	s := ModeStats{Instructions: n * p.perMMA.Instructions, BusyCycles: n * p.perMMA.BusyCycles,
		ActualFMAs: n * p.perMMA.ActualFMAs, DenseEquivFMAs: n * p.perMMA.DenseEquivFMAs}
	u.stats.ModeStats.add(s)
	if m == tensorcore.Dense {
		u.stats.Dense.add(s)
	} else {
		u.stats.Sparse.add(s)
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

// Stages returns the pipeline stages of a precision's datapath in a mode
// at its configured pattern.
func (u *Unit) Stages(precision tensorcore.Precision, m tensorcore.Mode) ([]tensorcore.Stage, error) {
	p, err := u.path(Request{Precision: precision, Mode: m, Count: 1})
	if err != nil {
		return nil, err
	}
	return append([]tensorcore.Stage(nil), p.Stages...), nil
}
