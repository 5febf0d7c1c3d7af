package sim

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stcsim/stcsim/internal/simcache"
)

// forgingCache keeps payloads in memory and, when asked, edits them on
// the way out: a cache whose MAC the forger could make (its secret
// leaked), so that only the record's own consistency stands between the
// edit and the run.
type forgingCache struct {
	mu     sync.Mutex
	m      map[simcache.Key][]byte
	edit   func(e *cacheEntry)
	counts simcache.Counts
}

func (c *forgingCache) Get(k simcache.Key, check func([]byte) error) ([]byte, simcache.Cause) {
	c.mu.Lock()
	data, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		return nil, simcache.MissNew
	}
	if c.edit != nil {
		var e cacheEntry
		if json.Unmarshal(data, &e) != nil {
			panic("a stored record does not parse")
		}
		c.edit(&e)
		data, _ = json.Marshal(e)
	}
	if check(data) != nil {
		return nil, simcache.MissRefused
	}
	return data, simcache.Hit
}

func (c *forgingCache) Put(k simcache.Key, payload []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = payload
}

func (c *forgingCache) Count(why simcache.Cause) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[why]++
}

// A record edited to say fewer cycles (the 4341x speedup), or to
// contradict itself or its key in any one field, is refused by its own
// consistency check and simulated again, even where the MAC would pass;
// an edit that keeps every field in step is the one thing that passes,
// and that takes the secret.
func TestEditedRecordIsRefused(t *testing.T) {
	t.Parallel()
	c := &forgingCache{m: map[simcache.Key][]byte{}, counts: simcache.Counts{}}
	job := gemmJob([3]int{256, 256, 256})
	job.Cache = c
	sets := []string{"gpu.sm_count=4"}
	uncached := job
	uncached.Cache = nil
	want := records(t, run(t, uncached, sets...))
	run(t, job, sets...) // fills the cache
	for name, edit := range map[string]func(e *cacheEntry){
		"cycles 1":           func(e *cacheEntry) { e.Record.Cycles = 1 },
		"time a tenth":       func(e *cacheEntry) { e.Record.TimeUS /= 10 },
		"tflops doubled":     func(e *cacheEntry) { e.Record.TFLOPS *= 2 },
		"clock doubled":      func(e *cacheEntry) { e.Power.ClockMHz *= 2 },
		"dram bytes halved":  func(e *cacheEntry) { e.Record.DRAMReadBytes /= 2 },
		"another shape":      func(e *cacheEntry) { e.Record.M *= 2 },
		"another mode":       func(e *cacheEntry) { e.Record.Mode = 1 - e.Record.Mode },
		"another precision":  func(e *cacheEntry) { e.Power.Act.Precision++ },
		"utilisation is NaN": func(e *cacheEntry) { e.Record.TCUtilization = math.NaN() },
		"bandwidth doubled":  func(e *cacheEntry) { e.Record.DRAMGBps *= 2 },
	} {
		c.edit = edit
		c.counts = simcache.Counts{}
		rep := run(t, job, sets...)
		if c.counts[simcache.MissRefused] != len(rep.Results) {
			t.Errorf("%s: outcomes %v, want every record refused", name, c.counts)
		}
		got := records(t, rep)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: record %d is not the simulated one:\n%s", name, i, got[i])
			}
		}
	}
	// An edit that keeps every derived field in step with the cycles passes
	// the check: against it stands the MAC (simcache's
	// TestEditedEntryIsRefused), not the record.
	c.edit = func(e *cacheEntry) {
		f := 0.5
		e.Record.Cycles = uint64(float64(e.Record.Cycles) * f)
		sec := float64(e.Record.Cycles) / (float64(e.Power.ClockMHz) * 1e6)
		e.Record.TimeUS = sec * 1e6
		e.Record.TFLOPS = 2 * float64(e.Record.M*e.Record.N*e.Record.K) / sec / 1e12
		e.Record.DRAMGBps = float64(e.Record.DRAMReadBytes+e.Record.DRAMWriteBytes) / sec / 1e9
	}
	c.counts = simcache.Counts{}
	if run(t, job, sets...); c.counts[simcache.Hit] == 0 {
		t.Errorf("a record edited in step was refused (%v): the check is stricter than its doc says", c.counts)
	}
	if !strings.Contains(cacheFormat, "v4") {
		t.Error("the key's format was not bumped with the key")
	}
}
