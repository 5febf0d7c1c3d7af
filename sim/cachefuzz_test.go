package sim

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/simcache"
)

// replayCache serves one payload for every key, through the caller's
// check: an entry whose MAC passed, whatever bytes it holds.
type replayCache struct{ payload []byte }

func (c replayCache) Get(_ simcache.Key, check func([]byte) error) ([]byte, simcache.Cause) {
	if err := check(c.payload); err != nil {
		if len(err.Error()) > 300 { // the warning quotes it: 400 bytes in all
			panic(fmt.Sprintf("a %d-byte refusal: %.100s", len(err.Error()), err))
		}
		return nil, simcache.MissRefused
	}
	return c.payload, simcache.Hit
}
func (replayCache) Put(simcache.Key, []byte) {}
func (replayCache) Count(simcache.Cause)     {}

// FuzzCachedRecord reads arbitrary payloads as cached records (as if the
// MAC had passed): no panic, every refusal's reason bounded, and a record is served only when it is of
// the job's shape and mode and its time agrees with its cycles and clock.
// Seeded with real records of both modes.
// Run: go test ./sim -run '^$' -fuzz FuzzCachedRecord -fuzztime 60s
func FuzzCachedRecord(f *testing.F) {
	ld, err := configs.Load(nil, []string{"gpu.sm_count=4", "sim.fidelity=fast"}) // seeds made in ms
	if err != nil {
		f.Fatal(err)
	}
	job := gemmJob([3]int{256, 256, 256})
	jobs := mustPrepare(f, ld.Config, job).layers
	seeds := &forgingCache{m: map[simcache.Key][]byte{}, counts: simcache.Counts{}}
	job.Cache = seeds
	rl, _ := Run(ld, job)
	if rl == nil {
		f.Fatal("no seed records")
	}
	for _, p := range seeds.m {
		f.Add(p)
	}
	f.Add([]byte(`{"record":{"cycles":1},"power":{"clock_mhz":1}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := mustPrepare(t, ld.Config, job)
		p.Job.Cache = replayCache{payload}
		r := newRunner(ld, p)
		found, _ := r.cached(jobs, map[string]string{})
		for i, rec := range found {
			if rec == nil {
				continue
			}
			var e cacheEntry
			if json.Unmarshal(payload, &e) != nil || e.consistent(jobs[i]) != nil {
				t.Fatalf("served a record its check refuses: %s", payload)
			}
			if rec.Mode != jobs[i].mode || rec.M != jobs[i].gemm.M || rec.Layer != jobs[i].gemm.Name {
				t.Fatalf("served %s %dx%dx%d %q for %s %s", rec.Mode, rec.M, rec.N, rec.K, rec.Layer, jobs[i].mode, jobs[i].gemm.Name)
			}
		}
	})
}
