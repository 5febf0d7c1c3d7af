package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

func TestPlainLinesAreSparse(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, false, 200, "sweep", fakeClock(time.Second))
	for i := 0; i < 200; i++ {
		b.Add(1)
	}
	b.Done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Start line, one per 10 % step (10), final line.
	if len(lines) != 12 {
		t.Fatalf("%d lines, want 12:\n%s", len(lines), out.String())
	}
	if lines[0] != "sweep: 200 to do" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "sweep: 20/200 (10%) elapsed 20s, ETA 3m0s") {
		t.Errorf("second line %q", lines[1])
	}
	if lines[11] != "sweep: 200/200 done in 3m21s" {
		t.Errorf("last line %q", lines[11])
	}
}

func TestPlainLogsWhenSlow(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, false, 1000, "run", fakeClock(2*time.Minute))
	b.Add(1) // 0 %, but two minutes since the last line
	if !strings.Contains(out.String(), "run: 1/1000 (0%)") {
		t.Errorf("no line after a silent minute:\n%s", out.String())
	}
}

// One long item (a large GEMM) does not leave plain mode silent: a
// heartbeat line every 30 s, and none while lines are recent.
func TestPlainHeartbeatWhileOneItemRuns(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, false, 1, "GEMMs", fakeClock(20*time.Second))
	b.tick() // 20 s since the start... then 40 s at this reading
	b.tick()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "GEMMs: 0/1 (0%)") ||
		!strings.Contains(lines[1], "(still running)") {
		t.Fatalf("want the start line and one heartbeat:\n%s", out.String())
	}
	b.Done()
	b.tick() // after Done: nothing
	if strings.Count(out.String(), "still running") != 1 {
		t.Errorf("a heartbeat after Done:\n%s", out.String())
	}
}

// A heartbeat says how far the running item is, from the Work callback.
func TestHeartbeatCarriesTheWorkMeter(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, false, 1, "GEMMs", fakeClock(40*time.Second))
	steps := 0
	b.Work(func() string { steps += 1000; return fmt.Sprintf("simulated %d warp k-steps", steps) })
	b.tick()
	b.tick()
	b.Done()
	if got := strings.Count(out.String(), "; simulated "); got != 2 {
		t.Fatalf("%d heartbeats with the work meter, want 2:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "simulated 2000 warp k-steps (still running)") {
		t.Errorf("the meter does not advance:\n%s", out.String())
	}
}

func TestSetWithLateTotal(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, false, 0, "GEMMs", fakeClock(time.Second))
	b.Set(5, 10)
	b.Done()
	want := "GEMMs: 5/10 (50%) elapsed 1s, ETA 1s\nGEMMs: 5/10 done in 2s\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestTerminalBar(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, true, 4, "points", fakeClock(time.Second))
	b.Add(1)
	b.Add(1)
	b.Done()
	s := out.String()
	for _, want := range []string{"\rpoints [", "1/4  25%", "2/4  50%",
		"ETA 2s", "\x1b[K\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("bar output lacks %q:\n%q", want, s)
		}
	}
}

func TestQuietAndNil(t *testing.T) {
	b := New(10, "x", true)
	if b != nil {
		t.Fatal("quiet bar is not nil")
	}
	b.Add(3) // must not panic
	b.Set(5, 10)
	b.Done()
}

// A failed run's bar ends without a "done" line; on a terminal the bar
// is cleared so the error that follows starts its own line.
func TestStopClaimsNothing(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, false, 0, "GEMMs", fakeClock(time.Second))
	b.Stop()
	b.Done() // after Stop: nothing more
	if out.Len() != 0 {
		t.Errorf("plain bar stopped before any work wrote %q", out.String())
	}
	out.Reset()
	b = newBar(&out, true, 4, "points", fakeClock(time.Second))
	b.Add(1)
	b.Stop()
	if s := out.String(); !strings.HasSuffix(s, "\r\x1b[K") || strings.Contains(s, "\n") {
		t.Errorf("terminal bar stopped: %q, want it cleared with no newline", s)
	}
	var nilBar *Bar
	nilBar.Stop() // quiet: must not panic
}

// The terminal bar stays within the terminal's width, however long the
// work meter's text, and a bar on a narrow terminal keeps its numbers.
func TestTerminalBarFitsTheWidth(t *testing.T) {
	for _, width := range []int{120, 80, 60} {
		var b strings.Builder
		bar := newBar(&b, true, 53, "GEMMs simulated", fakeClock(time.Second))
		bar.width = width
		bar.Work(func() string { return "simulated 1.23e+07 of about 4.56e+08 warp k-steps" })
		for i := 1; i <= 53; i++ {
			bar.Set(i, 53)
		}
		bar.Done()
		for _, line := range strings.Split(b.String(), "\r") {
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\x1b[K")
			if n := utf8.RuneCountInString(line); n >= width {
				t.Errorf("width %d: line of %d columns: %q", width, n, line)
			}
		}
		if !strings.Contains(b.String(), "53/53") {
			t.Errorf("width %d: the count is cut: %q", width, b.String())
		}
	}
}

// With a work fraction, the percentage and the ETA follow the work, not
// the items: one GEMM of two done, but a tenth of the work, leaves nine
// times the elapsed time.
func TestETAFollowsTheWork(t *testing.T) {
	var b strings.Builder
	clock := fakeClock(time.Second)
	bar := newBar(&b, true, 2, "GEMMs", clock)
	bar.Fraction(func() float64 { return 0.1 })
	bar.Set(1, 2) // 1 s after the start
	out := b.String()
	if !strings.Contains(out, "10% of the work") || !strings.Contains(out, "1s ETA 9s") {
		t.Errorf("bar does not follow the work: %q", out)
	}
	bar.Stop()
}
