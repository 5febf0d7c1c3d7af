package simcache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Cause is the outcome of one lookup: Hit, or why it missed.
type Cause string

// The outcomes of a lookup. A miss of an entry that is not there says
// what the directory holds for the same row (the GEMM's shape, operands,
// mode and weights): nothing, or records made by another model (another
// build of the simulator's source), under another config, or both.
const (
	Hit         Cause = "hit"
	MissNew     Cause = "new row"
	MissModel   Cause = "model changed"
	MissConfig  Cause = "config changed"
	MissBoth    Cause = "model and config changed"
	MissRefused Cause = "refused"
)

// The statistics log: its name, the size at which it is rotated and the
// format its lines carry.
const (
	statsName       = "stats.log"
	maxStatsBytes   = 1 << 20
	statsLineFormat = "v1"
)

// Causes are the outcomes in the order reports list them.
var Causes = []Cause{Hit, MissNew, MissModel, MissConfig, MissBoth, MissRefused}

// Counts are lookups by outcome.
type Counts map[Cause]int

// Total is the lookups counted.
func (n Counts) Total() int {
	t := 0
	for _, v := range n {
		t += v
	}
	return t
}

// String lists the misses by cause ("2 new row, 1 model changed").
func (n Counts) String() string {
	var parts []string
	for _, c := range Causes[1:] {
		if n[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[c], c))
		}
	}
	return strings.Join(parts, ", ")
}

// whyAbsent is the cause of a miss of an entry that is not there: what
// the shard holds for the same row.
func (c *Cache) whyAbsent(k Key) Cause {
	files, err := os.ReadDir(filepath.Join(c.dir, k.Row[:2]))
	if err != nil {
		return MissNew
	}
	model, config := false, false
	other := false
	for _, f := range files {
		rest, ok := strings.CutPrefix(f.Name(), k.Row+".")
		if !ok || !ownEntry(k.Row[:2], f.Name()) {
			continue
		}
		m, cfg, _ := strings.Cut(strings.TrimSuffix(rest, ".entry"), ".")
		model = model || m == k.Model
		config = config || cfg == k.Config
		other = true
	}
	switch {
	case !other:
		return MissNew
	case model:
		return MissConfig
	case config:
		return MissModel
	}
	return MissBoth
}

// Count adds one lookup's outcome to this process's counts.
func (c *Cache) Count(cause Cause) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = Counts{}
	}
	c.counts[cause]++
}

// Counts are the outcomes this process counted.
func (c *Cache) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Counts{}
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// StatsLine is one line of the directory's statistics: the outcomes of
// one command's lookups.
type StatsLine struct {
	Format  string    `json:"format"`
	Time    time.Time `json:"time"`
	Command string    `json:"command"`
	Counts  Counts    `json:"counts"`
}

// Record appends this process's counts (when any) to the directory's
// statistics, as command's; a log over 1 MiB is rotated first (the one
// before it kept). A failure is a warning.
func (c *Cache) Record(command string) {
	n := c.Counts()
	c.mu.Lock()
	ro := c.readOnly
	c.mu.Unlock()
	if n.Total() == 0 || ro {
		return
	}
	line, _ := json.Marshal(StatsLine{Format: statsLineFormat, Time: time.Now().UTC().Truncate(time.Second),
		Command: command, Counts: n})
	p := filepath.Join(c.dir, statsName)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > maxStatsBytes {
		os.Rename(p, p+".1")
	}
	f, err := openAppendNoFollow(p)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		c.warn(fmt.Sprintf("cache statistics not recorded: %v", errors.Unwrap(err)))
	}
}

// Stats are the directory's recorded lines, oldest first (the rotated
// log's, then the current one's); lines that do not parse are skipped
// and counted.
func (c *Cache) Stats() (lines []StatsLine, skipped int, err error) {
	for _, name := range []string{statsName + ".1", statsName} {
		data, err := readBounded(c.dir, name, 2*maxStatsBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<10)
		for sc.Scan() {
			var l StatsLine
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Format != statsLineFormat || !validCounts(l.Counts) {
				skipped++
				continue
			}
			lines = append(lines, l)
		}
		if sc.Err() != nil {
			skipped++
		}
	}
	slices.SortStableFunc(lines, func(a, b StatsLine) int { return a.Time.Compare(b.Time) })
	return lines, skipped, nil
}

// validCounts reports whether every outcome of n is known and not negative.
func validCounts(n Counts) bool {
	for k, v := range n {
		if v < 0 || v > 1<<40 || !slices.Contains(Causes, k) {
			return false
		}
	}
	return true
}
