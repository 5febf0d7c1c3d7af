// Package bug carries a panic from a worker goroutine to the command's
// edge. A panic is a bug whatever the input, and cmd/stcsim reports one
// as exit 3 with its value and where it was raised; but Go's runtime ends
// the process (with exit 2, the status that means bad input) when a
// goroutine other than the one that recovers panics. Workers run each
// item under a Catcher and the coordinator re-raises the first panic on
// its own goroutine after the workers are done, so the edge sees it.
package bug

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Panic is a recovered panic: its value and the first frame outside the
// runtime where it was raised.
type Panic struct {
	Value any
	Site  string
}

// String is the panic's value and site, for a one-line report.
func (p *Panic) String() string { return fmt.Sprintf("%v at %s", p.Value, p.Site) }

// Catcher holds the first panic of the items its workers ran.
type Catcher struct {
	mu    sync.Mutex
	first *Panic
}

// Do runs f and says whether it returned; a panic inside f is recovered
// and kept (the first one of all the items), so the worker goes on to
// its next item and nothing waits for ever on one that died.
func (c *Catcher) Do(f func()) (returned bool) {
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(*Panic) // re-raised by a nested Catcher: keep its site
			if !ok {
				p = &Panic{Value: r, Site: Site(3)}
			}
			c.mu.Lock()
			if c.first == nil {
				c.first = p
			}
			c.mu.Unlock()
		}
	}()
	f()
	return true
}

// Raise panics with the first panic kept, if any, on the caller's
// goroutine: call it after the workers are done.
func (c *Catcher) Raise() {
	c.mu.Lock()
	p := c.first
	c.mu.Unlock()
	if p != nil {
		panic(p)
	}
}

// Site is the function and line that raised the panic being recovered:
// the first frame outside the runtime, skip frames above the caller of
// the deferred function (recover's deferred function's caller chain).
func Site(skip int) string {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(skip, pc)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			return fmt.Sprintf("%s (%s:%d)", f.Function, f.File[strings.LastIndex(f.File, "/")+1:], f.Line)
		}
		if !more {
			return "an unknown place"
		}
	}
}
