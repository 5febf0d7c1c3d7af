// Package simcache is a persistent, content-addressed store of simulation
// results. A Key (made by the caller) names one entry: a file under the
// cache directory whose name holds the hashes of what the record is of (the
// row), of the model that made it and of the config it ran under, so that
// a miss can say why it missed (Cause). Entries are written to a temporary
// file and renamed, so a reader never sees half of one and two processes
// (a Slurm array's shards on a shared file system) may fill the cache at
// once. Each entry carries an HMAC-SHA256 of its key and payload under the
// cache's secret (a file the directory is created with, mode 0600), and
// is read only when it is a regular file, reached without a symbolic
// link, under MaxEntryBytes, whose MAC verifies and which passes the
// caller's check: anything else is a miss, with a warning, and is never
// served. The directory is kept under a size cap, least recently used
// entries out first; the cap and Clean remove only files the cache wrote
// (its naming, in a directory that carries its marker file). The cache
// never changes a result: a hit returns the bytes a miss stored.
package simcache

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stcsim/stcsim/internal/quote"
)

// DefaultMaxBytes is the default size cap of a cache directory.
const DefaultMaxBytes = 1 << 30

// MaxEntryBytes bounds an entry: a larger file under an entry's name is
// refused unread (a record is a few KB).
const MaxEntryBytes = 32 << 20

// magic starts every entry: the MAC and the payload follow.
const magic = "stcsim-cache-v2\n"

// Cache is one cache directory. Its methods are safe for concurrent use.
type Cache struct {
	dir      string
	maxBytes int64
	secret   []byte // nil: entries cannot be verified, nor written
	// Warn receives one line per problem (an entry refused, a directory
	// that cannot be written); nil drops them.
	Warn func(string)

	mu               sync.Mutex
	counts           Counts
	readOnly, warned bool
}

// Key names one entry: the hex SHA-256 of what the record is of (Row:
// its format, the GEMM row's shape and operands, the mode, the weights),
// of the model that simulates it and of the config it runs under.
type Key struct{ Row, Model, Config string }

// NewKey hashes each part: the model's identity, the config's hash and
// the row's parts (Hash).
func NewKey(model, config string, row ...[]byte) Key {
	return Key{Row: Hash(row...), Model: Hash([]byte(model)), Config: Hash([]byte(config))}
}

// Hash is the SHA-256 (hex) of the parts, each length-prefixed so that no
// two different part lists give the same bytes.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (k Key) valid() bool { return isHex64(k.Row) && isHex64(k.Model) && isHex64(k.Config) }

// name is the entry's file name.
func (k Key) name() string { return k.Row + "." + k.Model + "." + k.Config + ".entry" }

func (c *Cache) path(k Key) string { return filepath.Join(c.dir, k.Row[:2], k.name()) }

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Get returns the payload stored under k when it passes check (nil: no
// check), and Hit; otherwise nil and why it missed. An entry that is not
// a regular file, is reached through a link, is too large, fails its MAC
// or fails check is refused with a warning (and left in place: the record
// simulated now replaces it). Get counts nothing (Count does).
func (c *Cache) Get(k Key, check func([]byte) error) ([]byte, Cause) {
	if !k.valid() {
		return nil, MissNew
	}
	if c.secret == nil {
		c.warnOnce(fmt.Sprintf("cache directory %s has no readable secret: its entries cannot be verified and are not used", quote.Q(c.dir)))
		return nil, MissNew
	}
	data, err := readBounded(filepath.Join(c.dir, k.Row[:2]), k.name(), MaxEntryBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, c.whyAbsent(k)
	}
	if err == nil {
		var payload []byte
		if payload, err = c.decode(k, data); err == nil && check != nil {
			err = check(payload)
		}
		if err == nil {
			now := time.Now()
			os.Chtimes(c.path(k), now, now) // least recently used: the entry was used now
			return payload, Hit
		}
	}
	c.warn(fmt.Sprintf("cache entry %s… in %s refused (%v): simulating again", k.Row[:12], quote.Q(c.dir), err))
	return nil, MissRefused
}

// Put stores payload under k: written to a temporary file in the same
// directory and renamed into place. Errors are warnings: the cache is an
// optimisation and never fails a run.
func (c *Cache) Put(k Key, payload []byte) {
	if !k.valid() {
		return
	}
	c.mu.Lock()
	ro := c.readOnly || c.secret == nil
	c.mu.Unlock()
	if ro {
		c.warnOnce(fmt.Sprintf("cache directory %s is not writable: results are not cached", quote.Q(c.dir)))
		return
	}
	shard := filepath.Join(c.dir, k.Row[:2])
	if err := makeShard(shard); err != nil {
		c.warnOnce(fmt.Sprintf("cache directory %s: %v: results are not cached", quote.Q(c.dir), err))
		return
	}
	tmp, err := os.CreateTemp(shard, tmpPrefix+"*")
	if err != nil {
		c.warnOnce(fmt.Sprintf("cache directory %s: %v: results are not cached", quote.Q(c.dir), err))
		return
	}
	werr := writeAll(tmp, c.encode(k, payload))
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		c.warnOnce(fmt.Sprintf("cache directory %s: writing an entry failed: results are not cached", quote.Q(c.dir)))
		return
	}
	if err := os.Rename(tmp.Name(), c.path(k)); err != nil {
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

// mac is the entry's MAC: HMAC-SHA256 under the secret of the entry's
// name (its key) and its payload, so an entry moved to another key fails
// too.
func (c *Cache) mac(k Key, payload []byte) []byte {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte(k.name()))
	m.Write([]byte{'\n'})
	m.Write(payload)
	return m.Sum(nil)
}

func (c *Cache) encode(k Key, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteString(hex.EncodeToString(c.mac(k, payload)))
	b.WriteByte('\n')
	b.Write(payload)
	return b.Bytes()
}

func (c *Cache) decode(k Key, data []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok || len(rest) < 65 || rest[64] != '\n' {
		return nil, errors.New("not an entry of this format, or truncated")
	}
	got, err := hex.DecodeString(string(rest[:64]))
	payload := rest[65:]
	if err != nil || !hmac.Equal(got, c.mac(k, payload)) {
		return nil, errors.New("its MAC does not verify: edited, damaged, or written under another cache's secret")
	}
	return payload, nil
}

// readBounded reads the file name in dir: dir must be a directory (not
// a link to one), the file a regular file reached without following a
// link, of at most limit bytes; a FIFO or a device is refused unread,
// without blocking.
func readBounded(dir, name string, limit int64) ([]byte, error) {
	if fi, err := os.Lstat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (%s)", filepath.Base(dir), fi.Mode().Type())
	}
	f, err := openNoFollow(filepath.Join(dir, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot open it without following a link: %w", errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes, over the %d-byte bound", fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("grew over the %d-byte bound while read", limit)
	}
	return data, err
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
