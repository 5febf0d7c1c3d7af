package memory

import (
	"math"
	"math/bits"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// fast is the tile-granular hierarchy. A request is split into lines;
// each line is looked up in its slice's tag model (so L2 reuse between
// CTAs is real) and booked on the bandwidth servers it crosses: the SM's
// L1 (loads through L1), the slice, the DRAM channel (misses) and the
// SM's crossbar port. The request completes when its slowest part does,
// plus the latency of the farthest level it reached. Nothing is
// allocated per line.
type fast struct {
	*akita.ComponentBase
	cb    clock.Callbacks
	p     params
	l2    []*tagArray // per slice
	l1    l1Model
	slice []calendar
	chans []calendar
	buses []dramBus // per channel
	ports []server
	wbq   []wbQueue // per slice
	stats Stats
	// inherited are the DRAM writes, of those in stats, of sectors the
	// warm pass left dirty (Warmer.InheritedWrites).
	inherited Stats
	free      []*cpDone // cp.async completions to reuse
	// freeDone: Read, Write and Flush completions to reuse
	freeDone []*plainDone
}

func newFast(engine akita.Engine, clk clock.Clock, p params) *fast {
	f := &fast{
		ComponentBase: akita.NewComponentBase(p.name),
		cb:            clock.Callbacks{Engine: engine, Clock: clk},
		p:             p,
		l2:            make([]*tagArray, p.slices),
		l1:            newL1Model(p),
		slice:         newCalendars(p.slices, p.sliceRate),
		chans:         newCalendars(p.cfg.DRAM.Channels, p.chanRate),
		buses:         newDRAMBuses(p.cfg.DRAM.Channels, p),
		ports:         newServers(p.numSMs, p.portRate),
		wbq:           make([]wbQueue, p.slices),
	}
	for i := range f.l2 {
		f.l2[i] = newTagArray(p.l2Sets, p.l2Ways)
		f.wbq[i].free = make([]float64, max(p.wbEntries, 1))
	}
	return f
}

// wbQueue is a slice's write-back queue: when each entry is free again
// (its victim written to DRAM), in the order the entries were taken.
type wbQueue struct {
	free []float64
	head int // the oldest entry
}

func newServers(n int, rate float64) []server {
	s := make([]server, n)
	for i := range s {
		s[i].rate = rate
	}
	return s
}

// Handle runs the completion callbacks the model schedules for itself.
func (f *fast) Handle(e akita.Event) error {
	f.cb.Fire(e)
	return nil
}

// request is the running state of one Read or Write.
type request struct {
	now    float64
	sm     int
	class  Class
	viaL1  bool
	write  bool
	issue  float64 // when the next line leaves the SM's crossbar port
	finish float64 // latest completion of any line so far
	arrive func(line int, at float64)
	info   ReadInfo
	cur    lineInfo // the line being served
}

// Read implements Hierarchy.
func (f *fast) Read(now uint64, sm int, class Class, r Region, viaL1 bool,
	done func(cycle uint64)) {
	q := request{now: float64(now), sm: sm, class: class, viaL1: viaL1,
		finish: float64(now)}
	f.run(&q, r)
	f.complete(q.finish, done)
}

// CpAsync implements Hierarchy: the lines' arrivals are known when the
// request is booked, so arrive is called for each of them now, with
// their (future) arrival cycles.
func (f *fast) CpAsync(now uint64, sm int, class Class, r Region,
	arrive func(line int, at float64), done func(cycle uint64, info ReadInfo)) {
	d := f.cpDone()
	d.done = done
	d.cycle, d.info = f.cpRun(now, sm, class, r, arrive)
	f.cb.At(f, d.cycle, d.fired)
}

// cpAsyncFill is CpAsync for a Filler's fill w: the completion event is
// w's own (w.completed, with the cycle and the request's info kept in
// w), the same event at the same cycle scheduled at the same point as
// CpAsync's, so that a completing cp.async touches one object, not two.
func (f *fast) cpAsyncFill(now uint64, sm int, class Class, r Region, w *fillWrite) {
	w.cycle, w.info = f.cpRun(now, sm, class, r, w.arrived)
	f.cb.At(f, w.cycle, w.completed)
}

// cpRun books a cp.async's lines, telling arrive of each, and returns
// the cycle it completes and its info.
func (f *fast) cpRun(now uint64, sm int, class Class, r Region,
	arrive func(line int, at float64)) (uint64, ReadInfo) {
	q := request{now: float64(now), sm: sm, class: class,
		finish: float64(now), arrive: arrive}
	q.info.Issued = now
	f.run(&q, r)
	return f.doneCycle(q.finish), q.info
}

// cpDone is a cp.async's completion event's state. Fired ones are
// reused, with their func value, so that a cp.async allocates nothing
// here.
type cpDone struct {
	f     *fast
	done  func(cycle uint64, info ReadInfo)
	cycle uint64
	info  ReadInfo
	fired func() // fire, made once
}

func (f *fast) cpDone() *cpDone {
	if d := reuse(&f.free); d != nil {
		return d
	}
	d := &cpDone{f: f}
	d.fired = d.fire
	return d
}

// fire tells the request's done, d going back to be reused first.
func (d *cpDone) fire() {
	done, c, info := d.done, d.cycle, d.info
	d.done = nil
	d.f.free = append(d.f.free, d)
	done(c, info)
}

// Write implements Hierarchy.
func (f *fast) Write(now uint64, sm int, class Class, r Region,
	done func(cycle uint64)) {
	q := request{now: float64(now), sm: sm, class: class, write: true,
		finish: float64(now)}
	f.run(&q, r)
	f.complete(q.finish, done)
}

// run serves a request line by line (q.finish: when its last line is
// done). Lines leave the SM's crossbar port one after another at the
// port's bandwidth; each line's slice and DRAM channel are booked from
// the moment it leaves.
func (f *fast) run(q *request, r Region) {
	f.stats.Requests++
	port := &f.ports[q.sm]
	q.issue = max(q.now, port.busy)
	portWait := q.issue - q.now
	lines := r.lines(f.p.lineBytes, f.p.secBytes)
	for i := 0; ; i++ {
		s, ok := lines.next()
		if !ok {
			break
		}
		q.cur = lineInfo{port: portWait, own: float64(i+1) *
			f.sectorBytes(s.mask) / f.p.portRate}
		at := f.line(q, s)
		q.info.add(q.cur, at, q.now)
		q.finish = max(q.finish, at)
		if q.arrive != nil {
			q.arrive(i, at)
		}
	}
	if q.issue > port.busy {
		port.spent += q.issue - max(q.now, port.busy)
		port.busy = q.issue
	}
}

// complete calls done at the cycle finish rounds up to (doneCycle).
func (f *fast) complete(finish float64, done func(cycle uint64)) {
	d := reuse(&f.freeDone)
	if d == nil {
		d = &plainDone{f: f}
		d.fired = d.fire
	}
	d.done, d.cycle = done, f.doneCycle(finish)
	f.cb.At(f, d.cycle, d.fired)
}

// plainDone is a Read's, Write's or Flush's completion event's state,
// reused like cpDone's.
type plainDone struct {
	f     *fast
	done  func(cycle uint64)
	cycle uint64
	fired func() // fire, made once
}

func (d *plainDone) fire() {
	done, c := d.done, d.cycle
	d.done = nil
	d.f.freeDone = append(d.f.freeDone, d)
	done(c)
}

// doneCycle is the cycle finish rounds up to, never before the engine's
// current cycle.
func (f *fast) doneCycle(finish float64) uint64 {
	return max(uint64(math.Ceil(finish-1e-9)), f.cb.Now())
}

// line serves one line of a request and returns when it is done (its
// data at the SM, or a write accepted by L2).
func (f *fast) line(q *request, s lineSpan) float64 {
	mask := s.mask
	done := q.now
	if q.viaL1 {
		done, mask = f.l1.load(q.now, q.sm, q.class, s, &f.stats)
		if mask == 0 {
			return done
		}
	}
	return max(done, f.lineL2(q, s.line, mask))
}

func (f *fast) sectorBytes(mask uint64) float64 {
	return float64(bits.OnesCount64(mask)) * float64(f.p.secBytes)
}

// lineL2 books a line on its slice and, for missing sectors, on its DRAM
// channel, and returns when the line is done.
func (f *fast) lineL2(q *request, line, mask uint64) float64 {
	sl, local := f.p.amap.slice(line)
	bytes := f.sectorBytes(mask)
	at := q.issue
	q.issue += bytes / f.p.portRate
	f.stats.L2Bytes += uint64(bytes)
	f.stats.PerClass[q.class].L2Bytes += uint64(bytes)
	miss, ev := f.l2[sl].access(local, mask, q.write, q.class)
	if ev.sectors != 0 {
		at = f.evict(at, sl, ev)
	}
	lat := f.p.hitLatency(q.sm, sl)
	cost := bytes // in read bytes of slice time
	if q.write {
		cost *= f.p.writeCost
	}
	end := f.slice[sl].reserve(at, cost)
	q.cur.slice = end - at - cost/f.p.sliceRate
	q.cur.lat = lat + cost/f.p.sliceRate
	q.cur.sectors = bits.OnesCount64(mask)
	if q.write {
		f.stats.L2HitSectors += uint64(bits.OnesCount64(mask))
		return end + oneWay(lat)
	}
	done := max(end, f.l2[sl].readyAt()) + lat
	if f.l2[sl].readyAt() > end {
		q.cur.merged = true // waits for a fill in flight from DRAM
	}
	nMiss := uint64(bits.OnesCount64(miss))
	f.stats.L2MissSectors += nMiss
	f.stats.L2HitSectors += uint64(bits.OnesCount64(mask)) - nMiss
	if miss != 0 {
		filled, arrived := f.fill(q, end, line, miss, lat)
		f.l2[sl].filledAt(filled)
		done = max(done, arrived)
	}
	return done
}

// oneWay is the latency of a write: done when L2 has accepted the data,
// half of a load's round trip.
func oneWay(lat float64) float64 { return lat / 2 }

// fill reads missing sectors from DRAM. It returns when the data is in
// the slice and when it has reached the SM.
func (f *fast) fill(q *request, at float64, line, miss uint64,
	lat float64) (filled, arrived float64) {
	bytes := f.sectorBytes(miss)
	f.stats.DRAMReadBytes += uint64(bytes)
	f.stats.PerClass[q.class].DRAMReadBytes += uint64(bytes)
	ch := f.p.amap.channel(line)
	cost := f.buses[ch].cost(false, bytes)
	end := f.chans[ch].reserve(at, cost)
	q.cur.dramSectors = bits.OnesCount64(miss)
	q.cur.channel = end - at - cost/f.p.chanRate
	q.cur.lat += cost/f.p.chanRate + f.p.dramExtra
	return end + f.p.dramExtra, end + lat + f.p.dramExtra
}

// evict moves a dirty victim into its slice's write-back queue and
// returns when it has left the line: at once while an entry is free,
// else when the queue's oldest entry has drained to DRAM (the queue is
// in order, as a slice's miss queue is). The entry stays taken until
// the victim's channel has written it.
func (f *fast) evict(at float64, sl int, ev eviction) float64 {
	q := &f.wbq[sl]
	start := max(at, q.free[q.head])
	q.free[q.head] = f.writeBack(start, sl, ev)
	q.head = (q.head + 1) % len(q.free)
	return start
}

// writeBack books a dirty victim's sectors on its DRAM channel; it is off
// the critical path of the request that evicted it.
func (f *fast) writeBack(now float64, sl int, ev eviction) float64 {
	bytes := f.countWriteBack(ev)
	ch := f.p.amap.channel(f.p.amap.lineOf(sl, ev.local))
	return f.chans[ch].reserve(now, f.buses[ch].cost(true, bytes))
}

// countWriteBack counts a dirty victim's bytes as DRAM writes, and those
// of its sectors the warm pass left dirty as inherited ones too; it
// returns the bytes.
func (f *fast) countWriteBack(ev eviction) float64 {
	bytes := f.sectorBytes(ev.sectors)
	f.stats.DRAMWriteBytes += uint64(bytes)
	f.stats.PerClass[ev.class].DRAMWriteBytes += uint64(bytes)
	if ev.warm != 0 {
		w := uint64(f.sectorBytes(ev.warm))
		f.inherited.DRAMWriteBytes += w
		f.inherited.PerClass[ev.class].DRAMWriteBytes += w
	}
	return bytes
}

// Flush implements Hierarchy: every dirty line is written back; the
// flush is done when DRAM has acknowledged the last write (its channel
// time plus the DRAM access beyond L2).
func (f *fast) Flush(now uint64, done func(cycle uint64)) {
	finish := float64(now)
	dirty := false
	for sl, t := range f.l2 {
		t.cleanAll(func(ev eviction) {
			dirty = true
			finish = max(finish, f.writeBack(float64(now), sl, ev))
		})
	}
	if dirty {
		finish += f.p.dramExtra
	}
	f.complete(finish, done)
}

// Launch implements Hierarchy: the slices' and channels' calendars count
// their windows from at.
func (f *fast) Launch(at uint64) {
	for i := range f.slice {
		f.slice[i].launch(float64(at))
	}
	for i := range f.chans {
		f.chans[i].launch(float64(at))
	}
}

// Touch implements Toucher: every line's sectors are looked up and
// filled as a read's are, and counted as its traffic (L2 bytes, hits and
// misses, the DRAM reads of the misses and the write-backs of dirty
// victims), but no server is booked: the time is the caller's. The DRAM
// buses' direction moves as that traffic would move it.
func (f *fast) Touch(class Class, r Region) {
	r.forEachLine(f.p.lineBytes, f.p.secBytes, func(s lineSpan) {
		sl, local := f.p.amap.slice(s.line)
		bytes := uint64(f.sectorBytes(s.mask))
		f.stats.L2Bytes += bytes
		f.stats.PerClass[class].L2Bytes += bytes
		miss, ev := f.l2[sl].access(local, s.mask, false, class)
		if ev.sectors != 0 {
			wb := f.countWriteBack(ev)
			f.buses[f.p.amap.channel(f.p.amap.lineOf(sl, ev.local))].cost(true, wb)
		}
		n := uint64(bits.OnesCount64(miss))
		f.stats.L2MissSectors += n
		f.stats.L2HitSectors += uint64(bits.OnesCount64(s.mask)) - n
		if miss != 0 {
			rd := uint64(f.sectorBytes(miss))
			f.stats.DRAMReadBytes += rd
			f.stats.PerClass[class].DRAMReadBytes += rd
			f.buses[f.p.amap.channel(s.line)].cost(false, float64(rd)) // the bus's direction as the reads leave it
		}
	})
}

// Warm implements Warmer.
func (f *fast) Warm(class Class, r Region, write bool) {
	r.forEachLine(f.p.lineBytes, f.p.secBytes, func(s lineSpan) {
		sl, local := f.p.amap.slice(s.line)
		t := f.l2[sl]
		t.access(local, s.mask, write, class)
		if write {
			t.markWarm(s.mask)
		}
	})
}

// InheritedWrites implements Warmer.
func (f *fast) InheritedWrites() Stats { return f.inherited }

// Stats implements Hierarchy.
func (f *fast) Stats() Stats {
	s := f.stats
	s.MaxL1Busy = maxSpent(f.l1.srv)
	s.MaxSliceBusy = maxCalendarSpent(f.slice)
	s.MaxChannelBusy = maxCalendarSpent(f.chans)
	s.MaxPortBusy = maxSpent(f.ports)
	return s
}
