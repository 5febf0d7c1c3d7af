// Package testfiles makes the hostile files that input tests hand to the
// project's loaders (a FIFO with no writer, a link to /dev/zero) and runs
// a load under a deadline, so that a loader that blocks or reads without
// end fails its test instead of hanging it.
package testfiles

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Deadline is how long Within lets a load run.
const Deadline = 5 * time.Second

// FIFO makes a named pipe dir/name that nothing writes to: reading it
// blocks for ever.
func FIFO(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// DevZero makes dir/name a link to /dev/zero: reading it never ends.
func DevZero(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Within runs load and returns its error, failing the test (what names
// the load) if it is still running after Deadline.
func Within(t testing.TB, what string, load func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- load() }()
	select {
	case err := <-done:
		return err
	case <-time.After(Deadline):
		t.Fatalf("%s still running after %s", what, Deadline)
		return nil
	}
}
