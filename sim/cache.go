package sim

import (
	"encoding/json"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/simcache"
)

// Cache keeps layer records across runs (internal/simcache is the one
// the command opens). Job.Cache nil: every record is simulated.
type Cache interface {
	Get(key string) ([]byte, bool)
	Put(key string, payload []byte)
}

// cacheFormat names the layout of a cached record; a change of
// LayerResult that old entries would not fill changes it.
const cacheFormat = "layer-record-v2" // v2: fidelity

// cacheKey names one record: the simulator build (Job.CacheSalt), the
// effective config as the mode reads it (configs.Loaded.HashFor: a dense
// record's key leaves out the fields tagged mode:"sparse"; every other key,
// the fidelity controls among them, is in), the workload's name, the GEMM row as written, the mode,
// and the content of the row's weight file. Anything else a record
// depends on is in these.
func (r *runner) cacheKey(j layerJob, weights map[string]string) string {
	gemm, _ := json.Marshal(j.gemm)
	return simcache.Key([]byte(cacheFormat), []byte(r.job.CacheSalt),
		[]byte(r.ld.HashFor(j.mode)), []byte(j.workload), gemm,
		[]byte(j.mode.String()), []byte(weights[j.gemm.Weights]))
}

// cached looks every job's record up; found[i] is job i's record, or nil.
// A running Observer wants to see the simulations, so it bypasses the
// cache.
func (r *runner) cached(jobs []layerJob, weights map[string]string) []*LayerResult {
	found := make([]*LayerResult, len(jobs))
	if r.job.Cache == nil || r.job.Observer != nil {
		return found
	}
	for i, j := range jobs {
		data, ok := r.job.Cache.Get(r.cacheKey(j, weights))
		if !ok {
			continue
		}
		var rec LayerResult
		if json.Unmarshal(data, &rec) != nil || rec.Mode != j.mode || rec.Layer != j.gemm.Name {
			continue
		}
		r.addCost(&rec) // the area is this config's, not the cached one's
		found[i] = &rec
	}
	return found
}

// store puts a fresh record in the cache (without its cache field).
func (r *runner) store(j layerJob, weights map[string]string, rec LayerResult) {
	if r.job.Cache == nil || r.job.Observer != nil {
		return
	}
	rec.Cache = ""
	data, err := json.Marshal(rec)
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
