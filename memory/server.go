package memory

import (
	"math"
	"sort"
)

// server is a "busy-until" bandwidth server: one resource (a slice, a DRAM
// channel, a crossbar port, an L1) that moves rate bytes per cycle and
// serves reservations in arrival order. Requests arrive in non-decreasing
// time, so reserving from max(now, busy) is causal. Times are fractional
// cycles so that sub-cycle transfers add up without rounding drift.
type server struct {
	rate  float64 // bytes per cycle
	busy  float64 // cycle at which the last reservation ends
	spent float64 // cycles spent serving (for utilisation)
}

// reserve books bytes starting no earlier than now; it returns the start
// and end of the transfer.
func (s *server) reserve(now float64, bytes float64) (start, end float64) {
	start = max(now, s.busy)
	d := bytes / s.rate
	s.busy = start + d
	s.spent += d
	return start, s.busy
}

// maxSpent is the largest busy time of a set of servers, in whole cycles.
func maxSpent(ss []server) uint64 {
	var m float64
	for i := range ss {
		m = max(m, ss[i].spent)
	}
	return uint64(m + 0.5)
}

// calendar is a bandwidth server for a resource shared by many SMs (an
// L2 slice, a DRAM channel). Requests are booked when an SM issues them,
// but their lines reach the resource later, each at its own time (after
// the SM's crossbar port has sent the lines before it). A busy-until
// server would make a line that arrives early wait behind a line booked
// earlier for a later time. The calendar instead keeps the bytes booked
// in each window of calendarWidth cycles: a line takes the free capacity
// of the window it arrives in and spills into later windows when that is
// full. Windows are counted from the epoch, the cycle the running kernel
// was launched at (launch), so that a kernel's own cycles do not depend
// on where it starts; they are kept in a ring of calendarWindows entries
// covering the booking horizon.
type calendar struct {
	rate  float64 // bytes per cycle
	epoch float64 // the cycle window 0 starts at
	win   []int64 // window index (from the epoch) held by each ring slot
	used  []float64
	spent float64
	last  int64 // latest window holding bookings
}

const (
	calendarWidth   = 16 // cycles per window
	calendarWindows = 1024
)

func newCalendars(n int, rate float64) []calendar {
	cs := make([]calendar, n)
	for i := range cs {
		cs[i] = calendar{rate: rate, win: make([]int64, calendarWindows),
			used: make([]float64, calendarWindows)}
		cs[i].clear()
	}
	return cs
}

// clear empties the ring.
func (c *calendar) clear() {
	for j := range c.win {
		c.win[j], c.used[j] = -1, 0
	}
	c.last = 0
}

// calendarScan is how many windows a booking searches for free capacity
// before it joins the end of the backlog: under overload the windows in
// between are (nearly) full, and this bounds the cost of a booking.
const calendarScan = 8

// reserve books bytes arriving at cycle at (not before the epoch) and
// returns when the last of them has been served.
func (c *calendar) reserve(at, bytes float64) float64 {
	c.spent += bytes / c.rate
	capacity := c.rate * calendarWidth
	w := int64((at - c.epoch) / calendarWidth)
	first := true
	for step := 0; ; step++ {
		if step == calendarScan && w < c.last {
			w = c.last
		}
		s := c.slot(w)
		start := c.epoch + float64(w)*calendarWidth
		free := capacity - c.used[s]
		if first {
			free = min(free, (start+calendarWidth-at)*c.rate)
		}
		take := max(0, min(free, bytes))
		c.used[s] += take
		bytes -= take
		if take > 0 {
			c.last = max(c.last, w)
		}
		if bytes <= 0 {
			end := start + c.used[s]/c.rate
			if first {
				end = max(end, at+take/c.rate)
			}
			return end
		}
		w++
		first = false
	}
}

// slot is the ring entry of window w, cleared when it last held an older
// window.
func (c *calendar) slot(w int64) int {
	s := int(w % calendarWindows)
	if c.win[s] < w {
		c.win[s] = w
		c.used[s] = 0
	}
	return s
}

// launch counts the windows from cycle epoch on, a kernel's launch (no
// earlier than any booking's arrival so far). Bytes already booked (an
// earlier kernel's backlog) keep their capacity: each old window's bytes
// are spread over the new windows it overlaps in proportion to the
// overlap, so a new window, which overlaps at most two old ones with
// complementary shares, holds no more than its capacity, and any stretch
// of cycles from the epoch on holds the bytes it held before. What lay
// before the epoch is past and is dropped.
func (c *calendar) launch(epoch float64) {
	if epoch == c.epoch {
		return
	}
	type booking struct {
		start, bytes float64
	}
	var old []booking
	for s, w := range c.win {
		if w >= 0 && c.used[s] > 0 {
			old = append(old, booking{c.epoch + float64(w)*calendarWidth, c.used[s]})
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].start < old[j].start })
	c.clear()
	c.epoch = epoch
	for _, b := range old {
		from := b.start - epoch
		w := int64(math.Floor(from / calendarWidth))
		tail := from - float64(w)*calendarWidth // cycles of window w before b
		c.book(w, b.bytes*(calendarWidth-tail)/calendarWidth)
		c.book(w+1, b.bytes*tail/calendarWidth)
	}
}

// book adds bytes to window w if it is not before the epoch.
func (c *calendar) book(w int64, bytes float64) {
	if w < 0 || bytes <= 0 {
		return
	}
	c.used[c.slot(w)] += bytes
	c.last = max(c.last, w)
}

// maxCalendarSpent is the largest busy time of a set of calendars.
func maxCalendarSpent(cs []calendar) uint64 {
	var m float64
	for i := range cs {
		m = max(m, cs[i].spent)
	}
	return uint64(m + 0.5)
}
