package simcache

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stcsim/stcsim/internal/quote"
)

// The files of a cache directory besides its shards (two hex digits,
// each holding entries and temporary files).
const (
	// MarkerName marks a directory as a cache (the CACHEDIR.TAG
	// convention, so backup tools skip it); Clean and the size cap act
	// only in a directory that has it.
	MarkerName = "CACHEDIR.TAG"
	// SecretName is the key of the entries' MAC, created with the
	// directory (mode 0600).
	SecretName = "secret"
	secretLen  = 32
	tmpPrefix  = ".tmp-"
	probeName  = ".probe-"
)

// marker is the marker file's content: the CACHEDIR.TAG signature, and a
// line that says the directory is stcsim's.
const marker = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# stcsim simulation cache: `stcsim cache clean` and the size cap remove only the entries stcsim wrote here.\n"

// Open opens (creating it if needed) the cache directory dir. A new or
// empty directory gets the marker file and a secret; an existing one must
// carry the marker, or hold nothing but what an earlier stcsim cache
// wrote (it is then marked): any other directory is an error, so a cache
// pointed at a user's directory never adopts (or cleans) it. A directory
// that cannot be created or written gives a read-only cache: lookups
// work where the secret can be read, stores are dropped with one warning.
func Open(dir string, maxBytes int64) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache directory: empty path")
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	c := &Cache{dir: dir, maxBytes: maxBytes}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			c.readOnly = true // no directory: no entries, nothing stored
			return c, nil
		}
		c.readOnly = true
	}
	marked, err := isMarked(dir)
	if err != nil {
		return nil, err
	}
	if !marked && afterMarkCheck != nil {
		afterMarkCheck(dir)
	}
	if !marked {
		stranger, err := foreignFile(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cache directory %s: %w", quote.Q(dir), err)
		}
		if stranger != "" {
			// Another process's Open may have marked the directory since
			// isMarked looked (the marker is linked in whole): a marked
			// directory is a cache, whatever else it holds.
			if marked, err = isMarked(dir); err != nil {
				return nil, err
			} else if !marked {
				return nil, fmt.Errorf("cache directory %s holds %s, which stcsim did not write, and no %s marker: "+
					"name a new or empty directory for the cache", quote.Q(dir), quote.Q(stranger), MarkerName)
			}
		}
	}
	if !marked {
		if err := writeNew(dir, MarkerName, []byte(marker), 0o644); !c.readOnly && err != nil && !errors.Is(err, fs.ErrExist) {
			c.readOnly = true
		}
	}
	if c.secret, err = c.loadSecret(); err != nil {
		return nil, err
	}
	if !c.readOnly {
		probe, err := os.CreateTemp(dir, probeName+"*")
		if err != nil {
			c.readOnly = true
		} else {
			probe.Close()
			os.Remove(probe.Name())
		}
	}
	return c, nil
}

// afterMarkCheck, nil outside tests, runs between Open's look for the
// marker and its look for foreign files: where a test marks the
// directory as a concurrent Open would.
var afterMarkCheck func(dir string)

// isMarked reports whether dir carries stcsim's marker file.
func isMarked(dir string) (bool, error) {
	data, err := readBounded(dir, MarkerName, 4096)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("cache directory %s: %s: %v", quote.Q(dir), MarkerName, err)
	}
	return bytes.Contains(data, []byte("stcsim simulation cache")), nil
}

// foreignFile is a name in dir that no stcsim cache writes ("" when
// there is none).
func foreignFile(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case e.Type().IsDir() && isShard(n):
		case e.Type().IsRegular() && (n == SecretName || n == statsName || n == statsName+".1" ||
			strings.HasPrefix(n, probeName) || strings.HasPrefix(n, tmpPrefix)):
		default:
			return n, nil
		}
	}
	return "", nil
}

// loadSecret reads the directory's secret, creating it when the
// directory has none and can be written (nil when neither).
func (c *Cache) loadSecret() ([]byte, error) {
	for range 2 {
		s, err := readBounded(c.dir, SecretName, secretLen)
		switch {
		case err == nil && len(s) == secretLen:
			return s, nil
		case err == nil:
			return nil, fmt.Errorf("cache directory %s: %s is %d bytes, want %d: remove it "+
				"(every entry is then a miss)", quote.Q(c.dir), SecretName, len(s), secretLen)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("cache directory %s: %s: %v", quote.Q(c.dir), SecretName, err)
		case c.readOnly:
			return nil, nil
		}
		s = make([]byte, secretLen)
		rand.Read(s)
		if err := writeNew(c.dir, SecretName, s, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
			c.readOnly = true
			return nil, nil
		}
		// Created, or another process created it first: read what is there.
	}
	return nil, fmt.Errorf("cache directory %s: %s cannot be created", quote.Q(c.dir), SecretName)
}

// writeNew creates dir/name with data atomically, failing (fs.ErrExist)
// if it exists: written to a temporary file, then hard-linked into place.
func writeNew(dir, name string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if err := tmp.Chmod(perm); werr == nil {
		werr = err
	}
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return werr
	}
	return os.Link(tmp.Name(), filepath.Join(dir, name))
}

// makeShard creates a shard directory, which must be a directory of its
// own (not a link elsewhere).
func makeShard(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (%s)", filepath.Base(p), fi.Mode().Type())
	}
	return nil
}

func isShard(n string) bool { return len(n) == 2 && isHex(n) }

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return s != ""
}

func isHex64(s string) bool { return len(s) == 64 && isHex(s) }

// ownEntry reports whether name, in the shard named shard, is an entry
// the cache writes: this format's Row.Model.Config.entry, or the single
// hash of the format before it, whose first two digits are the shard's.
func ownEntry(shard, name string) bool {
	base, ok := strings.CutSuffix(name, ".entry")
	if !ok || !strings.HasPrefix(base, shard) {
		return false
	}
	parts := strings.Split(base, ".")
	if len(parts) != 1 && len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if !isHex64(p) {
			return false
		}
	}
	return true
}

// entry is one entry file of the cache directory.
type entry struct {
	path string
	size int64
	used time.Time
}

// walk calls fn for every file the cache wrote in a shard: its entries
// and (tmp) its temporary files. Links, directories and files of any
// other name are never passed: they are not the cache's.
func (c *Cache) walk(fn func(p string, fi fs.FileInfo, tmp bool)) error {
	shards, err := os.ReadDir(c.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, s := range shards {
		if !s.Type().IsDir() || !isShard(s.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(c.dir, s.Name()))
		if err != nil {
			continue // removed meanwhile, or unreadable: not ours to judge
		}
		for _, f := range files {
			own, tmp := ownEntry(s.Name(), f.Name()), strings.HasPrefix(f.Name(), tmpPrefix)
			if !f.Type().IsRegular() || !(own || tmp) {
				continue
			}
			if fi, err := f.Info(); err == nil {
				fn(filepath.Join(c.dir, s.Name(), f.Name()), fi, tmp)
			}
		}
	}
	return nil
}

func (c *Cache) entries() ([]entry, error) {
	var out []entry
	err := c.walk(func(p string, fi fs.FileInfo, tmp bool) {
		if !tmp {
			out = append(out, entry{p, fi.Size(), fi.ModTime()})
		}
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

// Clean removes every entry and leftover temporary file the cache wrote
// (nothing else: not a link, not a file of another name, not the secret
// nor the statistics) and returns how many entries it removed.
func (c *Cache) Clean() (int, error) {
	if ok, err := isMarked(c.dir); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s has no %s marker: not an stcsim cache, nothing removed", quote.Q(c.dir), MarkerName)
		}
		return 0, err
	}
	n := 0
	err := c.walk(func(p string, _ fs.FileInfo, tmp bool) {
		if os.Remove(p) == nil && !tmp {
			n++
		}
	})
	return n, err
}
