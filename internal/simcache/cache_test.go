package simcache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPutGetRoundTrip(t *testing.T) {
	c, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	k := Key([]byte("config"), []byte("gemm"))
	if _, ok := c.Get(k); ok {
		t.Fatal("hit in an empty cache")
	}
	c.Put(k, []byte(`{"cycles": 123}`))
	got, ok := c.Get(k)
	if !ok || string(got) != `{"cycles": 123}` {
		t.Fatalf("got %q %v", got, ok)
	}
	if h, m := c.Counts(); h != 1 || m != 1 {
		t.Errorf("counts %d hits %d misses, want 1 and 1", h, m)
	}
	// Length-prefixed parts: ("ab","c") and ("a","bc") differ.
	if Key([]byte("ab"), []byte("c")) == Key([]byte("a"), []byte("bc")) {
		t.Error("keys of different part lists collide")
	}
	if _, ok := c.Get("../../etc/passwd"); ok {
		t.Error("a key that is not a hash was looked up")
	}
}

// A truncated or altered entry is a miss, removed, with one warning.
func TestCorruptEntryIsAMiss(t *testing.T) {
	c, _ := Open(t.TempDir(), 0)
	var warnings []string
	c.Warn = func(s string) { warnings = append(warnings, s) }
	for i, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)-3] },                                  // truncated
		func(b []byte) []byte { return bytes.Replace(b, []byte("7"), []byte("8"), 1) }, // altered payload
		func(b []byte) []byte { return []byte("garbage") },
	} {
		k := Key([]byte{byte(i)})
		c.Put(k, []byte(`{"cycles": 777}`))
		p := c.path(k)
		data, _ := os.ReadFile(p)
		os.WriteFile(p, damage(data), 0o644)
		if got, ok := c.Get(k); ok {
			t.Errorf("damage %d: hit %q", i, got)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("damage %d: the entry was not removed", i)
		}
	}
	if len(warnings) != 3 || !strings.Contains(warnings[0], "corrupt") {
		t.Errorf("warnings %q", warnings)
	}
}

// Over the cap, the least recently used entries go first.
func TestSizeCapEvictsLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	payload := bytes.Repeat([]byte("x"), 1000)
	c, _ := Open(dir, 2500) // two entries of about 1.1 KB fit
	keys := []string{Key([]byte("a")), Key([]byte("b")), Key([]byte("c"))}
	old := time.Now().Add(-time.Hour)
	c.Put(keys[0], payload)
	c.Put(keys[1], payload)
	os.Chtimes(c.path(keys[0]), old, old.Add(time.Minute)) // a used after b
	os.Chtimes(c.path(keys[1]), old, old)
	c.Put(keys[2], payload)
	if _, err := os.Stat(c.path(keys[1])); !os.IsNotExist(err) {
		t.Error("the least recently used entry survived")
	}
	for _, k := range []string{keys[0], keys[2]} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("entry %s… was evicted", k[:8])
		}
	}
	info, err := c.Stat()
	if err != nil || info.Entries != 2 || info.Bytes > 2500 {
		t.Errorf("stat %+v %v", info, err)
	}
	if n, err := c.Clean(); err != nil || n != 2 {
		t.Errorf("clean removed %d (%v), want 2", n, err)
	}
}

// A directory that cannot be written degrades to no cache, one warning.
func TestReadOnlyDirectory(t *testing.T) {
	// A path under a regular file cannot be created, even by root.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	dir := filepath.Join(file, "cache")
	c, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	c.Warn = func(string) { n++ }
	c.Put(Key([]byte("a")), []byte("x"))
	c.Put(Key([]byte("b")), []byte("y"))
	if n != 1 {
		t.Errorf("%d warnings, want one", n)
	}
}

// Processes filling one key at once leave one whole entry.
func TestConcurrentPuts(t *testing.T) {
	dir := t.TempDir()
	k := Key([]byte("shared"))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := Open(dir, 0)
			c.Put(k, bytes.Repeat([]byte("z"), 100000))
		}()
	}
	wg.Wait()
	c, _ := Open(dir, 0)
	got, ok := c.Get(k)
	if !ok || len(got) != 100000 {
		t.Fatalf("after concurrent puts: %d bytes, hit %v", len(got), ok)
	}
	left, _ := filepath.Glob(filepath.Join(dir, k[:2], ".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
