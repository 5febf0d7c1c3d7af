package memory

import (
	"math"

	"github.com/stcsim/stcsim/memory/smem"
)

// FillPlan is how the lines of one cp.async region are written into a
// shared-memory tile: line by line (in the order Hierarchy.CpAsync
// reports them), the packets each line's data arrives in over the
// crossbar, and the bank-array wavefronts of writing each packet at the
// shared-memory addresses of its 16-B vectors.
type FillPlan struct {
	lines      []fillLine
	Bytes      int // region bytes
	Packets    int
	Wavefronts int
}

type fillLine struct {
	bytes []int // per packet: region bytes it carries
	waves []int // per packet: wavefronts of writing it
}

// Filler plans and performs cp.async fills for the SMs of one GPU: it
// knows the crossbar's packet width and the bank geometry, and caches
// plans by region shape and alignment (every k-step of a kernel repeats a
// few shapes).
type Filler struct {
	smem      SharedMemoryConfig
	packet    int // bytes per crossbar packet (crossbar.port_bytes_per_clk)
	lineBytes int
	cache     map[fillKey]*FillPlan
	// last is the plan Plan returned last per class: a kernel's copies
	// of one operand repeat one shape, and comparing a key in place is
	// cheaper than hashing it.
	last [NumClasses]struct {
		key  fillKey
		plan *FillPlan
	}
	// free holds finished fills for reuse, with the func values of their
	// callbacks (a GPU runs on one goroutine, so no lock).
	free []*fillWrite
}

type fillKey struct {
	layout          smem.Layout
	baseOff, pitchO uint64
	rows, rowBytes  int
}

// NewFiller makes the planner of a memory configuration. A crossbar
// packet is what the SM's port moves in one cycle
// (crossbar.port_bytes_per_clk); it never spans two lines.
func NewFiller(cfg Config) *Filler {
	return &Filler{smem: cfg.SharedMemory,
		packet:    min(cfg.Crossbar.PortBytesPerClk, cfg.L2.LineBytes),
		lineBytes: cfg.L2.LineBytes, cache: map[fillKey]*FillPlan{}}
}

// LeastWavefronts is the fewest whole bank-array cycles' worth a fill of
// plan p books: its wavefronts, or with shared_memory.fill_packing its
// bytes' share of cycles rounded down (a packet may then share a cycle).
// A lower bound for the selection's pruner.
func (f *Filler) LeastWavefronts(p *FillPlan) int {
	if f.smem.FillPacking {
		return p.Bytes * max(1, f.smem.Ports) / max(1, f.smem.BytesPerClk)
	}
	return p.Wavefronts
}

// Plan is the fill plan of region r into a tile laid out by l: row i of
// the region is the tile's strided index i, byte b of a row its
// contiguous element b*8/ElemBits.
func (f *Filler) Plan(r Region, l smem.Layout) *FillPlan {
	return f.plan(f.key(r, l), r, l)
}

// PlanOf is Plan for a copy of class c, remembering the last plan of
// each class.
func (f *Filler) PlanOf(c Class, r Region, l smem.Layout) *FillPlan {
	k := f.key(r, l)
	if c < 0 || c >= NumClasses {
		return f.plan(k, r, l)
	}
	m := &f.last[c]
	if m.plan == nil || m.key != k {
		m.key, m.plan = k, f.plan(k, r, l)
	}
	return m.plan
}

// key is what a fill plan of region r into layout l depends on.
func (f *Filler) key(r Region, l smem.Layout) fillKey {
	lb := uint64(f.lineBytes)
	return fillKey{layout: l, baseOff: r.Base % lb, pitchO: r.Pitch % lb,
		rows: r.Rows, rowBytes: r.RowBytes}
}

// plan is the cached plan of key k, made the first time.
func (f *Filler) plan(k fillKey, r Region, l smem.Layout) *FillPlan {
	if p, ok := f.cache[k]; ok {
		return p
	}
	p := &FillPlan{}
	r.forEachRowSpan(uint64(f.lineBytes), func(row, from, to int) {
		p.addLine(f.line(l, row, from, to))
	})
	f.cache[k] = p
	return p
}

func (p *FillPlan) addLine(ln fillLine) {
	p.lines = append(p.lines, ln)
	for i := range ln.bytes {
		p.Bytes += ln.bytes[i]
		p.Packets++
		p.Wavefronts += ln.waves[i]
	}
}

// line plans one line: bytes [from, to) of tile row row, cut into packets
// in address order, each written as one store of its 16-B vectors.
func (f *Filler) line(l smem.Layout, row, from, to int) fillLine {
	var ln fillLine
	for a := from; a < to; a += f.packet {
		end := min(to, a+f.packet)
		addrs := l.VectorAddrs(row, a, end)
		ln.bytes = append(ln.bytes, end-a)
		ln.waves = append(ln.waves, smem.Wavefronts(addrs, smem.AccessBytes, f.smem))
	}
	return ln
}

// FillDone is the outcome of one cp.async region: when it was issued,
// when its last byte reached the SM, when its last byte was written into
// shared memory, and when that would have been with the bank array to
// itself (Written - Unqueued is the wait for the bank array).
type FillDone struct {
	Issued, Arrived, Written, Unqueued uint64
	Info                               ReadInfo
}

// Cause is what the fill was bound by: the bank array when its writes
// queued longer than its data did on the way, else the arrival's cause.
func (d FillDone) Cause() Cause {
	smemQ := float64(d.Written - d.Unqueued)
	if smemQ > 1 && smemQ >= d.Info.Queued() {
		return CauseSmem
	}
	return d.Info.cause()
}

// CpAsync copies region r from global memory into SM sm's shared memory s
// (cp.async, L1 bypassed) laid out as plan says: each line is written as
// it arrives from the crossbar, one packet per cycle from its arrival,
// each packet a request of its wavefronts contending with the SM's loads
// and stores for the bank array. done runs from the hierarchy's event
// once the last byte has arrived; Written may be later (the SM must not
// read the stage before it).
func (f *Filler) CpAsync(h Hierarchy, s *smem.SharedMemory, now uint64, sm int,
	class Class, r Region, plan *FillPlan, done func(FillDone)) {
	s.Advance(now)
	w := f.fillWrite()
	w.s, w.plan, w.done = s, plan, done
	w.now, w.written, w.unqueued = now, now, now
	w.holds = f.smem.FillArbitration == LoadsFirst
	if fh, ok := h.(*fast); ok {
		fh.cpAsyncFill(now, sm, class, r, w)
		return
	}
	h.CpAsync(now, sm, class, r, w.arrived, w.finished)
}

// fillWrite is a reused fill, or a new one with its callbacks' func
// values made.
func (f *Filler) fillWrite() *fillWrite {
	if w := reuse(&f.free); w != nil {
		return w
	}
	w := &fillWrite{f: f}
	w.arrived, w.finished, w.completed = w.arrive, w.finish, w.complete
	return w
}

// reuse takes the last item off a free list (nil: the list is empty).
func reuse[T any](free *[]*T) *T {
	n := len(*free)
	if n == 0 {
		return nil
	}
	x := (*free)[n-1]
	*free = (*free)[:n-1]
	return x
}

// fillWrite is the shared-memory side of one cp.async request.
type fillWrite struct {
	f                 *Filler
	s                 *smem.SharedMemory
	plan              *FillPlan
	done              func(FillDone)
	now               uint64
	written, unqueued uint64
	holds             bool // loads_first: arrivals are held until flush
	held              []heldLine
	// heldBuf backs held for a request of up to eight lines (a 512-byte
	// chunk of rows of 64 bytes or more), saving an allocation per
	// cp.async.
	heldBuf [8]heldLine
	// arrived and finished are arrive and finish as func values, made
	// once per fillWrite and reused with it.
	arrived  func(line int, at float64)
	finished func(c uint64, info ReadInfo)
	// cycle and info are the completion the fast hierarchy computed
	// when the request was booked; completed (complete, made once) is
	// its event (fast.cpAsyncFill).
	cycle     uint64
	info      ReadInfo
	completed func()
}

type heldLine struct {
	line int
	at   uint64
}

// arrive is the hierarchy's report of line i arriving at at: booked now,
// or held (one method, so that a cp.async makes one func value for it).
func (w *fillWrite) arrive(i int, at float64) {
	if w.holds {
		w.hold(i, at)
		return
	}
	w.book(i, at)
}

// finish is the hierarchy's report that the request's last byte arrived
// at c: the held lines are written, done is told, and w is free again.
func (w *fillWrite) finish(c uint64, info ReadInfo) {
	w.flush()
	d := FillDone{Issued: w.now, Arrived: c, Written: max(c, w.written),
		Unqueued: max(c, w.unqueued), Info: info}
	done := w.done
	w.s, w.plan, w.done = nil, nil, nil
	w.f.free = append(w.f.free, w)
	done(d)
}

// complete is the fast hierarchy's completion event of the request.
func (w *fillWrite) complete() { w.finish(w.cycle, w.info) }

// book writes line i's packets from its arrival cycle on, one packet per
// cycle, each taking the first bank-array cycles with room.
func (w *fillWrite) book(i int, at float64) {
	if i >= len(w.plan.lines) {
		return
	}
	t := max(uint64(math.Ceil(at-1e-9)), w.now)
	ln := w.plan.lines[i]
	for k := range ln.waves {
		w.written = max(w.written, w.s.Write(t+uint64(k), ln.bytes[k], ln.waves[k]))
	}
	w.unqueued = max(w.unqueued, t+uint64(len(ln.waves)))
}

// hold keeps an arrival in the fill buffer until the request is complete
// (loads_first: the bank array serves every load booked until then
// first; the held packets then take the cycles left from their arrivals).
func (w *fillWrite) hold(i int, at float64) {
	if w.held == nil {
		w.held = w.heldBuf[:0]
	}
	w.held = append(w.held, heldLine{i, max(uint64(math.Ceil(at-1e-9)), w.now)})
}

// flush books the held lines in arrival order (equal arrivals in the
// order they were held).
func (w *fillWrite) flush() {
	sortHeld(w.held)
	for _, h := range w.held {
		w.book(h.line, float64(h.at))
	}
	w.held = nil
}

// sortHeld sorts lines by arrival, stably: an insertion sort, as a
// request holds only its few lines.
func sortHeld(h []heldLine) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].at < h[j-1].at; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}
