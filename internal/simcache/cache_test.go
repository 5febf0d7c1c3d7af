package simcache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// key is a test key: one model, one config, the row s.
func key(s string) Key { return NewKey("model", "config", []byte(s)) }

func open(t *testing.T, dir string) (*Cache, *[]string) {
	t.Helper()
	c, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	c.Warn = func(s string) { warnings = append(warnings, s) }
	return c, &warnings
}

func TestPutGetRoundTrip(t *testing.T) {
	c, _ := open(t, t.TempDir())
	k := key("gemm")
	if _, why := c.Get(k, nil); why != MissNew {
		t.Fatalf("empty cache: %q, want %q", why, MissNew)
	}
	c.Put(k, []byte(`{"cycles": 123}`))
	got, why := c.Get(k, nil)
	if why != Hit || string(got) != `{"cycles": 123}` {
		t.Fatalf("got %q %v", got, why)
	}
	// Length-prefixed parts: ("ab","c") and ("a","bc") differ.
	if Hash([]byte("ab"), []byte("c")) == Hash([]byte("a"), []byte("bc")) {
		t.Error("keys of different part lists collide")
	}
	if _, why := c.Get(Key{Row: "../../etc/passwd", Model: k.Model, Config: k.Config}, nil); why == Hit {
		t.Error("a key that is not a hash was looked up")
	}
	// The secret is created with the directory, readable by its owner only.
	fi, err := os.Stat(filepath.Join(c.Dir(), SecretName))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != secretLen {
		t.Errorf("secret: %v %v", fi, err)
	}
}

// A miss says what the directory holds for the row: nothing, another
// model's record, another config's, or both.
func TestMissCauses(t *testing.T) {
	c, _ := open(t, t.TempDir())
	row := []byte("4096x4096x4096 sparse")
	c.Put(NewKey("model A", "config 1", row), []byte("x"))
	for _, tc := range []struct {
		k    Key
		want Cause
	}{
		{NewKey("model A", "config 1", row), Hit},
		{NewKey("model B", "config 1", row), MissModel},
		{NewKey("model A", "config 2", row), MissConfig},
		{NewKey("model B", "config 2", row), MissBoth},
		{NewKey("model A", "config 1", []byte("another row")), MissNew},
	} {
		if _, why := c.Get(tc.k, nil); why != tc.want {
			t.Errorf("%+v: %q, want %q", tc.k, why, tc.want)
		}
	}
}

// writeEntry replaces k's entry file with data.
func writeEntry(t *testing.T, c *Cache, k Key, data []byte) {
	t.Helper()
	if err := os.WriteFile(c.path(k), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An entry edited in any way (its checksum recomputed as the old format
// allowed, or a byte of the payload changed), truncated, moved to another
// key or written under another cache's secret is refused: a miss, with
// one bounded warning each, never served.
func TestEditedEntryIsRefused(t *testing.T) {
	c, warnings := open(t, t.TempDir())
	other, _ := open(t, t.TempDir())
	payload := []byte(`{"cycles": 777, "time_us": 0.5}`)
	k, k2 := key("a"), key("b")
	c.Put(k, payload)
	good, _ := os.ReadFile(c.path(k))
	other.Put(k, payload)
	foreign, _ := os.ReadFile(other.path(k))
	for name, data := range map[string][]byte{
		"payload edited":  bytes.Replace(good, []byte("777"), []byte("001"), 1),
		"truncated":       good[:len(good)-3],
		"garbage":         []byte("garbage"),
		"empty":           nil,
		"another secret":  foreign,
		"old format":      append([]byte("stcsim-cache-v1\n"+strings.Repeat("0", 64)+"\n"), payload...),
		"MAC of its twin": func() []byte { c.Put(k2, payload); b, _ := os.ReadFile(c.path(k2)); return b }(),
	} {
		*warnings = nil
		writeEntry(t, c, k, data)
		if got, why := c.Get(k, nil); why != MissRefused {
			t.Errorf("%s: %q %q, want refused", name, got, why)
		}
		if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "refused") || len((*warnings)[0]) > 400 {
			t.Errorf("%s: warnings %q", name, *warnings)
		}
	}
	// The check the caller gives refuses a record the MAC passes.
	writeEntry(t, c, k, good)
	if _, why := c.Get(k, func([]byte) error { return errors.New("cycles disagree with time") }); why != MissRefused {
		t.Errorf("a failed check: %q, want refused", why)
	}
	if got, why := c.Get(k, func([]byte) error { return nil }); why != Hit || !bytes.Equal(got, payload) {
		t.Errorf("the entry itself: %q %q", got, why)
	}
}

// Over the cap, the least recently used entries go first.
func TestSizeCapEvictsLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	payload := bytes.Repeat([]byte("x"), 1000)
	c, _ := Open(dir, 2500) // two entries of about 1.1 KB fit
	keys := []Key{key("a"), key("b"), key("c")}
	old := time.Now().Add(-time.Hour)
	c.Put(keys[0], payload)
	c.Put(keys[1], payload)
	os.Chtimes(c.path(keys[0]), old, old.Add(time.Minute)) // a used after b
	os.Chtimes(c.path(keys[1]), old, old)
	c.Put(keys[2], payload)
	if _, err := os.Stat(c.path(keys[1])); !os.IsNotExist(err) {
		t.Error("the least recently used entry survived")
	}
	for _, k := range []Key{keys[0], keys[2]} {
		if _, why := c.Get(k, nil); why != Hit {
			t.Errorf("entry %s… was evicted", k.Row[:8])
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

// userFiles are files a user keeps in or under a cache directory, some
// named like entries; clean and the cap must leave every one.
func userFiles(t *testing.T, dir string, k Key) []string {
	t.Helper()
	shard := filepath.Join(dir, k.Row[:2])
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	os.MkdirAll(shard, 0o755)
	files := []string{
		filepath.Join(dir, "notes", k.Row+".entry"),                 // entry-like, outside a shard
		filepath.Join(dir, "notes", ".tmp-draft"),                   // temp-like, outside a shard
		filepath.Join(shard, "results.entry"),                       // wrong name in a shard
		filepath.Join(shard, "ff"+strings.Repeat("0", 62)+".entry"), // another shard's name
	}
	for _, f := range files {
		if err := os.WriteFile(f, bytes.Repeat([]byte("u"), 5000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(t.TempDir(), "precious.entry")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(shard, k.Row+"."+k.Model+"."+strings.Repeat("e", 64)+".entry")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return append(files, link, target)
}

// `cache clean` and the size cap remove only what the cache wrote; a
// directory without the marker is not cleaned at all, and one holding a
// user's files is not adopted as a cache.
func TestCacheRemovesOnlyItsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 3000)
	if err != nil {
		t.Fatal(err)
	}
	k := key("mine")
	keep := userFiles(t, dir, k)
	for i := range 5 { // the cap forces evictions
		c.Put(key(string(rune('a'+i))), bytes.Repeat([]byte("x"), 1000))
	}
	if n, err := c.Clean(); err != nil || n == 0 {
		t.Errorf("clean: %d %v", n, err)
	}
	for _, f := range keep {
		if _, err := os.Lstat(f); err != nil {
			t.Errorf("%s was removed", f)
		}
	}
	if info, _ := c.Stat(); info.Entries != 0 {
		t.Errorf("after clean: %d entries", info.Entries)
	}
	// A user's directory with files is not adopted, and so never cleaned.
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "thesis.tex"), []byte("x"), 0o644)
	if _, err := Open(home, 0); err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Errorf("a user's directory was opened as a cache: %v", err)
	}
	os.Remove(filepath.Join(dir, MarkerName))
	if _, err := c.Clean(); err == nil {
		t.Error("clean acted in a directory without the marker")
	}
}

// A cache of the format before this one (no marker, single-hash entries)
// is adopted, and its entries are the cache's to clean.
func TestOldCacheIsAdopted(t *testing.T) {
	dir := t.TempDir()
	old := strings.Repeat("ab", 32)
	os.MkdirAll(filepath.Join(dir, "ab"), 0o755)
	os.WriteFile(filepath.Join(dir, "ab", old+".entry"), []byte("stcsim-cache-v1\n"), 0o644)
	c, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.Clean(); err != nil || n != 1 {
		t.Errorf("clean of an old cache: %d %v", n, err)
	}
}

// A directory that cannot be written degrades to no cache, one warning.
func TestReadOnlyDirectory(t *testing.T) {
	// A path under a regular file cannot be created, even by root.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	c, warnings := open(t, filepath.Join(file, "cache"))
	c.Put(key("a"), []byte("x"))
	c.Put(key("b"), []byte("y"))
	if _, why := c.Get(key("a"), nil); why == Hit {
		t.Error("hit in a cache that cannot exist")
	}
	if len(*warnings) != 1 {
		t.Errorf("warnings %q, want one", *warnings)
	}
}

// Processes filling one key at once leave one whole entry.
func TestConcurrentPuts(t *testing.T) {
	dir := t.TempDir()
	k := key("shared")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Open(dir, 0)
			if err != nil {
				t.Error(err)
				return
			}
			c.Put(k, bytes.Repeat([]byte("z"), 100000))
		}()
	}
	wg.Wait()
	c, _ := Open(dir, 0)
	got, why := c.Get(k, nil)
	if why != Hit || len(got) != 100000 {
		t.Fatalf("after concurrent puts: %d bytes, %q", len(got), why)
	}
	left, _ := filepath.Glob(filepath.Join(dir, k.Row[:2], ".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// The statistics: each command's counts are a line of the log, read back
// by outcome; a damaged line is skipped and counted, never summed.
func TestStatsRecordsOutcomes(t *testing.T) {
	dir := t.TempDir()
	for _, outcome := range [][]Cause{{Hit, Hit, MissNew}, {MissModel, Hit}} {
		c, _ := open(t, dir)
		for _, o := range outcome {
			c.Count(o)
		}
		c.Record("run")
	}
	f, _ := os.OpenFile(filepath.Join(dir, statsName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"format":"v1","counts":{"hit":-5}}` + "\n" + "not json\n")
	f.Close()
	c, _ := open(t, dir)
	lines, skipped, err := c.Stats()
	if err != nil || len(lines) != 2 || skipped != 2 {
		t.Fatalf("lines %+v skipped %d err %v", lines, skipped, err)
	}
	sum := Counts{}
	for _, l := range lines {
		for k, v := range l.Counts {
			sum[k] += v
		}
	}
	if sum[Hit] != 3 || sum[MissNew] != 1 || sum[MissModel] != 1 || sum.String() != "1 new row, 1 model changed" {
		t.Errorf("sum %v (%s)", sum, sum)
	}
}

// A directory that another process's Open marks between this Open's
// look for the marker and its look for foreign files is a cache, not a
// stranger's directory (TestConcurrentPuts met this race about 1 run in
// 40): the marker is checked again before a file is called foreign.
func TestOpenRacingAnotherOpen(t *testing.T) {
	dir := t.TempDir()
	afterMarkCheck = func(d string) {
		if err := writeNew(d, MarkerName, []byte(marker), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { afterMarkCheck = nil }()
	if _, err := Open(dir, 0); err != nil {
		t.Fatalf("Open after a concurrent marking: %v", err)
	}
}
