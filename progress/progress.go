package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bar tracks done of total items. Its methods are safe for concurrent
// use; a nil *Bar does nothing.
type Bar struct {
	mu      sync.Mutex
	out     io.Writer
	tty     bool
	label   string
	total   int
	done    int
	start   time.Time
	now     func() time.Time
	last    time.Time // last line or redraw
	lastPct int       // last logged percentage step (plain mode)
	ended   bool
	stop    chan struct{}  // ends the terminal redraw loop
	work    func() string  // how far the running items are, inside (Work)
	frac    func() float64 // the share of the work done (Fraction)
	width   int            // the terminal's columns; 0: not a terminal
}

// Plain mode logs at most one line per 10 % step, and at least one every
// logMaxSilent, progress or not (a heartbeat while one long item runs).
const (
	logStepPct   = 10
	logMaxSilent = 30 * time.Second
	redrawEvery  = 100 * time.Millisecond
	barWidth     = 30
	minBarWidth  = 10
	// defaultWidth is the terminal width assumed where it cannot be read.
	defaultWidth = 80
)

// New starts a bar of total items (0 if not known yet, see Set) named label on stderr: a bar when
// stderr is a terminal, plain lines otherwise, nothing when quiet.
func New(total int, label string, quiet bool) *Bar {
	if quiet {
		return nil
	}
	b := NewWriter(os.Stderr, isTerminal(os.Stderr), total, label)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.width = TerminalWidth(os.Stderr)
	return b
}

// NewWriter starts a bar on w; tty selects the redrawn bar over plain
// lines.
func NewWriter(w io.Writer, tty bool, total int, label string) *Bar {
	return newBar(w, tty, total, label, time.Now)
}

func newBar(w io.Writer, tty bool, total int, label string,
	now func() time.Time) *Bar {
	b := &Bar{out: w, tty: tty, label: label, total: total, now: now, width: defaultWidth}
	b.start = b.now()
	b.last = b.start
	if !tty && total > 0 {
		fmt.Fprintf(w, "%s: %d to do\n", label, total)
	}
	b.stop = make(chan struct{})
	go b.tickLoop()
	return b
}

// tickLoop runs tick every second until the bar ends, so that a long
// item neither freezes the terminal bar's elapsed time and ETA nor leaves
// plain mode silent.
func (b *Bar) tickLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.tick()
		}
	}
}

// tick redraws the terminal bar, or in plain mode logs a line when none
// was written for logMaxSilent.
func (b *Bar) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	switch {
	case b.ended:
	case b.tty:
		b.last = now
		fmt.Fprint(b.out, "\r"+b.barLine(now)+"\x1b[K")
	case now.Sub(b.last) >= logMaxSilent:
		b.last = now
		fmt.Fprintln(b.out, b.plainLine(now)+" (still running)")
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Work sets what the bar's lines add after the item count: how far the
// items still running are (the simulator's warp k-steps against their
// estimate), so that a run of one long GEMM shows progress, not only
// "still running".
func (b *Bar) Work(f func() string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.work = f
}

// Fraction sets where the bar reads the share of the work done, in
// [0, 1]: the bar, its percentage and the ETA then follow the work
// rather than the items, whose sizes differ by orders of magnitude (one
// GEMM can be most of a run). A share of 0 (nothing measured yet, or no
// work to measure) falls back to the items.
func (b *Bar) Fraction(f func() float64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frac = f
}

// progress is the share of the run done: the work's when known, else
// the items'.
func (b *Bar) progress() (frac float64, byWork bool) {
	if b.frac != nil {
		if f := b.frac(); f > 0 && b.done < b.total {
			return min(f, 1), true
		}
	}
	if b.total <= 0 {
		return 0, false
	}
	return min(float64(b.done)/float64(b.total), 1), false
}

// workText is the Work suffix of a line, empty without one.
func (b *Bar) workText() string {
	if b.work == nil {
		return ""
	}
	return "; " + b.work()
}

// Add records n more items done.
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(b.done + n)
}

// Set records that done of total items are finished, for callbacks that
// report absolute counts (like sim.Job.Progress) and for totals known
// only once work has started.
func (b *Bar) Set(done, total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = total
	b.set(done)
}

func (b *Bar) set(done int) {
	if b.ended {
		return
	}
	b.done = done
	now := b.now()
	if b.tty {
		if now.Sub(b.last) >= redrawEvery || b.done >= b.total {
			b.last = now
			fmt.Fprint(b.out, "\r"+b.barLine(now)+"\x1b[K")
		}
		return
	}
	pct := 0
	if b.total > 0 {
		pct = 100 * b.done / b.total
	}
	step := pct / logStepPct * logStepPct
	if step > b.lastPct || now.Sub(b.last) >= logMaxSilent {
		b.lastPct, b.last = step, now
		fmt.Fprintln(b.out, b.plainLine(now))
	}
}

// Stop ends the bar of a run that failed: no "done" line (it would
// claim work that was not done), and on a terminal the bar is cleared
// so that the error starts its own line.
func (b *Bar) Stop() { b.finish(false) }

// Done ends the bar: a final line with the elapsed time.
func (b *Bar) Done() { b.finish(true) }

// finish ends the bar once, with its final line when done.
func (b *Bar) finish(done bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.ended = true
	close(b.stop)
	now := b.now()
	switch {
	case b.tty && done:
		fmt.Fprint(b.out, "\r"+b.barLine(now)+"\x1b[K\n")
	case b.tty:
		fmt.Fprint(b.out, "\r\x1b[K")
	case done:
		fmt.Fprintf(b.out, "%s: %d/%d done in %s\n", b.label, b.done, b.total,
			round(now.Sub(b.start)))
	}
}

// barLine is the terminal's line, kept within its width: the work
// meter goes first, then the bar narrows, then the line is cut.
func (b *Bar) barLine(now time.Time) string {
	frac, byWork := b.progress()
	if b.total <= 0 && !byWork {
		frac = 1
	}
	of := ""
	if byWork {
		of = " of the work"
	}
	line := func(bw int, work string) string {
		fill := int(frac * float64(bw))
		return fmt.Sprintf("%s [%s%s] %d/%d %3.0f%%%s %s ETA %s%s", b.label,
			strings.Repeat("=", fill), strings.Repeat(" ", bw-fill),
			b.done, b.total, 100*frac, of, round(now.Sub(b.start)), b.eta(now), work)
	}
	s := line(barWidth, b.workText())
	if b.width <= 0 || utf8.RuneCountInString(s) < b.width {
		return s
	}
	s = line(barWidth, "")
	if over := utf8.RuneCountInString(s) - (b.width - 1); over > 0 {
		s = line(max(minBarWidth, barWidth-over), "")
	}
	if r := []rune(s); len(r) >= b.width {
		s = string(r[:max(0, b.width-1)])
	}
	return s
}

func (b *Bar) plainLine(now time.Time) string {
	pct := 0
	if b.total > 0 {
		pct = 100 * b.done / b.total
	}
	share := fmt.Sprintf("%d%%", pct)
	if frac, byWork := b.progress(); byWork {
		share = fmt.Sprintf("%.0f%% of the work", 100*frac)
	}
	return fmt.Sprintf("%s: %d/%d (%s) elapsed %s, ETA %s%s", b.label,
		b.done, b.total, share, round(now.Sub(b.start)), b.eta(now), b.workText())
}

// eta extrapolates the time per share of the work done so far (of the
// items where the work is not measured).
func (b *Bar) eta(now time.Time) string {
	if b.total > 0 && b.done >= b.total {
		return "0s"
	}
	frac, _ := b.progress()
	if frac <= 0 {
		return "?"
	}
	elapsed := now.Sub(b.start)
	left := time.Duration(float64(elapsed) * (1 - frac) / frac)
	return round(left).String()
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
