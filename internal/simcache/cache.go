// Package simcache is a persistent, content-addressed store of simulation
// results: a key (the SHA-256 of everything a result depends on, made by
// the caller) names one entry, a file under the cache directory. Entries
// are written to a temporary file and renamed, so a reader never sees half
// of one and two processes (a Slurm array's shards on a shared file
// system) may fill the cache at once; each entry carries the SHA-256 of
// its payload, so a corrupt or truncated one is a miss, removed. The
// directory is kept under a size cap, least recently used entries out
// first. The cache never changes a result: a hit returns the bytes a miss
// stored.
package simcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxBytes is the default size cap of a cache directory.
const DefaultMaxBytes = 1 << 30

// magic starts every entry: the format and the payload's SHA-256 follow.
const magic = "stcsim-cache-v1\n"

// Cache is one cache directory. Its methods are safe for concurrent use.
type Cache struct {
	dir      string
	maxBytes int64
	// Warn receives one line per problem (a corrupt entry, a directory
	// that cannot be written); nil drops them.
	Warn func(string)

	mu               sync.Mutex
	hits, misses     int
	readOnly, warned bool
}

// Open opens (creating it if needed) the cache directory dir. A directory
// that cannot be created or written gives a read-only cache: lookups work
// where they can, stores are dropped with one warning.
func Open(dir string, maxBytes int64) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache directory: empty path")
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	c := &Cache{dir: dir, maxBytes: maxBytes}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.readOnly = true
		return c, nil
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		c.readOnly = true
		return c, nil
	}
	probe.Close()
	os.Remove(probe.Name())
	return c, nil
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Key is the SHA-256 (hex) of the parts, each length-prefixed so that no
// two different part lists give the same bytes.
func Key(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".entry")
}

func validKey(key string) bool {
	if len(key) != 64 {
		return false
	}
	_, err := hex.DecodeString(key)
	return err == nil
}

// Get returns the payload stored under key. A missing, unreadable or
// corrupt entry is a miss (a corrupt one is removed, with a warning).
func (c *Cache) Get(key string) ([]byte, bool) {
	if !validKey(key) {
		return nil, false
	}
	p := c.path(key)
	data, err := os.ReadFile(p)
	if err != nil {
		c.count(false)
		return nil, false
	}
	payload, ok := decode(data)
	if !ok {
		c.warn(fmt.Sprintf("cache entry %s is corrupt or truncated: removed, simulating again", p))
		os.Remove(p)
		c.count(false)
		return nil, false
	}
	now := time.Now()
	os.Chtimes(p, now, now) // least recently used: the entry was used now
	c.count(true)
	return payload, true
}

// Put stores payload under key: written to a temporary file in the same
// directory and renamed into place. Errors are warnings: the cache is an
// optimisation and never fails a run.
func (c *Cache) Put(key string, payload []byte) {
	if !validKey(key) {
		return
	}
	c.mu.Lock()
	ro := c.readOnly
	c.mu.Unlock()
	if ro {
		c.warnOnce(fmt.Sprintf("cache directory %s is not writable: results are not cached", c.dir))
		return
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.warnOnce(fmt.Sprintf("cache directory %s: %v: results are not cached", c.dir, err))
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		c.warnOnce(fmt.Sprintf("cache directory %s: %v: results are not cached", c.dir, err))
		return
	}
	werr := writeAll(tmp, encode(payload))
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		c.warnOnce(fmt.Sprintf("cache directory %s: writing an entry failed: results are not cached", c.dir))
		return
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return
	}
	c.trim()
}

// writeAll writes an entry's bytes to its temporary file (a variable so
// that a test can make the disk full).
var writeAll = func(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}

func encode(payload []byte) []byte {
	sum := sha256.Sum256(payload)
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteByte('\n')
	b.Write(payload)
	return b.Bytes()
}

func decode(data []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok || len(rest) < 65 || rest[64] != '\n' {
		return nil, false
	}
	want, payload := string(rest[:64]), rest[65:]
	sum := sha256.Sum256(payload)
	return payload, hex.EncodeToString(sum[:]) == want
}

func (c *Cache) count(hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hit {
		c.hits++
	} else {
		c.misses++
	}
}

// Counts are the hits and misses of this process's lookups.
func (c *Cache) Counts() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

func (c *Cache) warn(s string) {
	if c.Warn != nil {
		c.Warn(s)
	}
}

func (c *Cache) warnOnce(s string) {
	c.mu.Lock()
	done := c.warned
	c.warned = true
	c.mu.Unlock()
	if !done {
		c.warn(s)
	}
}

// entry is one file of the cache directory.
type entry struct {
	path string
	size int64
	used time.Time
}

func (c *Cache) entries() ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".entry") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile by another process
		}
		out = append(out, entry{p, info.Size(), info.ModTime()})
		return nil
	})
	return out, err
}

// trim removes the least recently used entries until the directory is
// under its cap.
func (c *Cache) trim() {
	es, err := c.entries()
	if err != nil {
		return
	}
	var total int64
	for _, e := range es {
		total += e.size
	}
	if total <= c.maxBytes {
		return
	}
	slices.SortFunc(es, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, e := range es {
		if total <= c.maxBytes {
			break
		}
		if os.Remove(e.path) == nil {
			total -= e.size
		}
	}
}

// Info is what `stcsim cache info` prints.
type Info struct {
	Dir      string `json:"dir"`
	Entries  int    `json:"entries"`
	Bytes    int64  `json:"bytes"`
	MaxBytes int64  `json:"max_bytes"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// Stat describes the cache directory.
func (c *Cache) Stat() (Info, error) {
	es, err := c.entries()
	info := Info{Dir: c.dir, Entries: len(es), MaxBytes: c.maxBytes, ReadOnly: c.readOnly}
	for _, e := range es {
		info.Bytes += e.size
	}
	return info, err
}

// Clean removes every entry (and leftover temporary files) and returns
// how many entries it removed.
func (c *Cache) Clean() (int, error) {
	n := 0
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		base := filepath.Base(p)
		if d.IsDir() || !(strings.HasSuffix(base, ".entry") || strings.HasPrefix(base, ".tmp-")) {
			return nil
		}
		if os.Remove(p) == nil && strings.HasSuffix(base, ".entry") {
			n++
		}
		return nil
	})
	return n, err
}
