//go:build unix

package simcache

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Entries are read without following links, must be regular files and
// are bounded: a link to /dev/zero, a FIFO (which would block a plain
// open), a huge sparse file and a shard that is a link are refused at
// once, each with a warning.
func TestHostileEntriesAreRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	c, warnings := open(t, dir)
	k := key("hostile")
	c.Put(k, []byte("x"))
	p := c.path(k)
	cases := map[string]func() error{
		"link to /dev/zero": func() error { return os.Symlink("/dev/zero", p) },
		"link to an entry": func() error {
			c.Put(key("elsewhere"), []byte("x"))
			return os.Symlink(c.path(key("elsewhere")), p)
		},
		"fifo": func() error { return syscall.Mkfifo(p, 0o644) },
		"5 GiB": func() error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(5 << 30)
				f.Close()
			}
			return err
		},
		"directory": func() error { return os.Mkdir(p, 0o755) },
	}
	for name, make := range cases {
		os.RemoveAll(p)
		if err := make(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		*warnings = nil
		done := make0(func() {
			if _, why := c.Get(k, nil); why != MissRefused {
				t.Errorf("%s: %q, want refused", name, why)
			}
		})
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Get blocked", name)
		}
		if len(*warnings) != 1 || len((*warnings)[0]) > 400 {
			t.Errorf("%s: warnings %q", name, *warnings)
		}
	}
	// A shard that is a link to another directory is not read through.
	elsewhere := t.TempDir()
	os.RemoveAll(filepath.Dir(p))
	if err := os.Symlink(elsewhere, filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	if _, why := c.Get(k, nil); why != MissRefused {
		t.Errorf("linked shard: %q, want refused", why)
	}
	c.Put(k, []byte("x"))
	if files, _ := os.ReadDir(elsewhere); len(files) != 0 {
		t.Errorf("an entry was written through a linked shard: %v", files)
	}
}

// make0 runs f in a goroutine and returns a channel closed when it ends.
func make0(f func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() { defer close(ch); f() }()
	return ch
}
