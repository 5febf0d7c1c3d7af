package bug

import (
	"strings"
	"sync"
	"testing"
)

func explode(i int) {
	if i == 3 {
		var m map[string]int
		m["x"] = 1 // a runtime panic: assignment to a nil map
	}
}

// A panic on one of several workers' items is kept with the site that
// raised it, every other item still runs, and Raise re-raises it on the
// coordinator's goroutine, where a recover sees it.
func TestWorkerPanicReachesTheCoordinator(t *testing.T) {
	var c Catcher
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := 0
	work := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				c.Do(func() { explode(i) })
				mu.Lock()
				ran++
				mu.Unlock()
			}
		}()
	}
	for i := range 8 {
		work <- i // would block for ever if the panicking worker had died
	}
	close(work)
	wg.Wait()
	if ran != 8 {
		t.Errorf("%d of 8 items ran", ran)
	}
	got := func() (p *Panic) {
		defer func() { p, _ = recover().(*Panic) }()
		c.Raise()
		return nil
	}()
	if got == nil {
		t.Fatal("Raise did not panic with the kept *Panic")
	}
	if !strings.Contains(got.Site, "bug.explode") || !strings.Contains(got.Site, "bug_test.go:") {
		t.Errorf("site %q, want bug.explode in bug_test.go", got.Site)
	}
	if !strings.Contains(got.String(), "nil map") {
		t.Errorf("value %q, want the runtime's nil-map message", got.String())
	}
}

// With no panic, Raise does nothing.
func TestRaiseWithoutPanic(t *testing.T) {
	var c Catcher
	c.Do(func() {})
	c.Raise()
}
