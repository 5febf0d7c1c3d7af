package sim

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
)

// Cache keeps layer records across runs (internal/simcache is the one
// the command opens). Job.Cache nil: every record is simulated. An
// implementation is comparable (a pointer): runs filling the same one
// share what they simulate at once (inflight).
type Cache interface {
	// Get is the payload stored under the key that passes check, and
	// simcache.Hit, or nil and why it missed.
	Get(k simcache.Key, check func([]byte) error) ([]byte, simcache.Cause)
	Put(k simcache.Key, payload []byte)
	// Count tallies one record's outcome: a hit, or the cause of the miss
	// that had it simulated.
	Count(simcache.Cause)
}

// cacheFormat names the layout of a cached record; a change of
// LayerResult that old entries would not fill changes it.
const cacheFormat = "layer-record-v4" // v2: fidelity; v3: the power inputs beside the record; v4: keyed by the row's shape, not its name

// cacheKey names one record: the model (Job.CacheSalt: internal/modelid,
// the hash of the simulator's source), the effective config as the mode's
// simulation reads it (configs.Loaded.SimulationHash: a dense record's
// key leaves out the fields tagged mode:"sparse" and dense:"energy", and
// under a locked clock no key has the power and area sections; every
// other key, the fidelity controls among them, is in), and the row: the
// GEMM's shape and operands (rowIdentity: not its name, count or note,
// nor the workload's name), the mode, and the content of the row's weight
// file. Anything else a record depends on is in these, or is made again
// from the reading run's config and row when it is read (applyPower:
// energy, power, cost; relabel: the names).
func (r *runner) cacheKey(j layerJob, weights map[string]string) simcache.Key {
	w := weights[j.gemm.Weights]
	if !j.shape.Sparse {
		w = "" // masks are read by the sparse kernel only
	}
	return simcache.NewKey(r.job.CacheSalt, r.simulationHash(j.mode),
		[]byte(cacheFormat), rowIdentity(j), []byte(j.mode.String()), []byte(w))
}

// simulationHash is the config's SimulationHash for the mode, made once
// per runner (a walk of the whole config).
func (r *runner) simulationHash(m tensorcore.Mode) string {
	r.simHashMu.Lock()
	defer r.simHashMu.Unlock()
	if h, ok := r.simHash[m]; ok {
		return h
	}
	if r.simHash == nil {
		r.simHash = map[tensorcore.Mode]string{}
	}
	r.simHash[m] = r.ld.SimulationHash(m)
	return r.simHash[m]
}

// rowIdentity is the GEMM row as the job's simulation reads it: every
// field but the labels a record copies (name, count, note) and the weight
// file's path (its content is in the key); a job that runs dense (the
// dense mode, or a row that stays dense) reads neither the row's pattern
// nor its sparse operand, so a `--mode dense` run's `--gemm` row (tagged
// dense) and a `--mode both` run's (tagged 2:4) share the dense record.
func rowIdentity(j layerJob) []byte {
	g := j.gemm
	g.Name, g.Count, g.Note, g.Weights = "", 0, "", ""
	if !j.shape.Sparse {
		g.Sparsity, g.SparseOperand = "", ""
	}
	data, _ := json.Marshal(g)
	return data
}

// inflight are the records that a run of this process is simulating
// now for a cache, each with a channel closed when the record is stored
// (or the run gave up). Only runs filling the same cache wait for each
// other.
var inflight = &claims{m: map[claim]chan struct{}{}}

type claims struct {
	sync.Mutex
	m map[claim]chan struct{}
}

// claim is one record of one cache.
type claim struct {
	cache Cache
	key   simcache.Key
}

// claim marks the record as simulated by the caller (mine), or returns
// the channel that closes when the run that claimed it is done with it.
func (c *claims) claim(k claim) (wait <-chan struct{}, mine bool) {
	c.Lock()
	defer c.Unlock()
	if ch, ok := c.m[k]; ok {
		return ch, false
	}
	c.m[k] = make(chan struct{})
	return nil, true
}

// release ends the caller's claims.
func (c *claims) release(ks []claim) {
	c.Lock()
	defer c.Unlock()
	for _, k := range ks {
		if ch, ok := c.m[k]; ok {
			close(ch)
			delete(c.m, k)
		}
	}
}

// cached looks every job's record up; found[i] is job i's record, or nil
// and why[i] why it missed. A running Observer wants to see the
// simulations, so it bypasses the cache.
func (r *runner) cached(jobs []layerJob, weights map[string]string) (found []*LayerResult, why []simcache.Cause) {
	found = make([]*LayerResult, len(jobs))
	why = make([]simcache.Cause, len(jobs))
	if r.job.Cache == nil || r.job.Observer != nil {
		return found, why
	}
	for i, j := range jobs {
		var e cacheEntry
		check := func(data []byte) error {
			e = cacheEntry{}
			if err := json.Unmarshal(data, &e); err != nil {
				return fmt.Errorf("not a record: %.120s", err.Error()) // json quotes the bad literal whole
			}
			return e.consistent(j)
		}
		if _, why[i] = r.job.Cache.Get(r.cacheKey(j, weights), check); why[i] != simcache.Hit {
			continue
		}
		rec := e.Record
		rec.Workload, rec.Layer, rec.Count = j.workload, j.gemm.Name, max(1, j.gemm.Count)
		e.Power.RowNote = j.gemm.Note
		if r.applyPower(&rec, e.Power) != nil { // this config's energy, power and area; this row's note
			continue // counts it cannot price: a miss, simulated again
		}
		found[i] = &rec
	}
	return found, why
}

// cacheEntry is what the cache keeps of a record: the record (without its
// cache field) and what its power fields are made from.
type cacheEntry struct {
	Record LayerResult `json:"record"`
	Power  powerInputs `json:"power"`
}

// store puts a fresh record in the cache.
func (r *runner) store(j layerJob, weights map[string]string, rec LayerResult, in powerInputs) {
	if r.job.Cache == nil || r.job.Observer != nil {
		return
	}
	rec.Cache = ""
	data, err := json.Marshal(cacheEntry{Record: rec, Power: in})
	if err != nil {
		return
	}
	r.job.Cache.Put(r.cacheKey(j, weights), data)
}

// weightHashes maps each weight file the workloads name to its content's
// SHA-256.
func weightHashes(ws map[string][]WeightsSource) map[string]string {
	out := map[string]string{}
	for _, list := range ws {
		for _, w := range list {
			out[w.Path] = w.SHA256
		}
	}
	return out
}

// CacheCounts are the cache hits and misses of a report's records.
func CacheCounts(rep *Report) (hits, misses int) {
	for _, r := range rep.Results {
		switch r.Cache {
		case "hit":
			hits++
		case "miss":
			misses++
		}
	}
	return hits, misses
}

// FidelityCounts are the records of a report the fast tier timed and
// those the instruction-level SM timed.
func FidelityCounts(rep *Report) (fast, instruction int) {
	for _, r := range rep.Results {
		if r.Fidelity == configs.FidelityFast {
			fast++
		} else {
			instruction++
		}
	}
	return fast, instruction
}

// UncachedWork is the work (as Work) of what a run of the prepared job
// would simulate: per mode, the distinct shapes of the records the cache
// would not serve (looked up and checked as Run does, counted as
// nothing). With no cache it is the work of each mode's records. For
// estimates: the work of a sweep's points whose records are cached is
// not work.
func (p *Prepared) UncachedWork(ld *configs.Loaded) (float64, error) {
	r := newRunner(ld, p)
	hashes := map[string]string{}
	if p.Job.Cache != nil {
		for _, w := range p.Job.Workloads {
			ws, err := w.WeightsSources()
			if err != nil {
				return 0, err
			}
			maps.Copy(hashes, weightHashes(map[string][]WeightsSource{w.Name: ws}))
		}
	}
	found, _ := r.cached(p.layers, hashes)
	total := 0.0
	for _, m := range p.modes {
		var shapes []*shapePlan
		seen := map[kernel.Shape]bool{}
		for i, j := range p.layers {
			if j.mode != m || found[i] != nil || seen[j.shape] {
				continue
			}
			seen[j.shape] = true
			shapes = append(shapes, p.byKey[j.shape])
		}
		if len(shapes) > 0 {
			total += workOf(p.cfg, p.total(shapes))
		}
	}
	return total, nil
}
