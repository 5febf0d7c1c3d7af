package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/tensorcore"
)

// sparseOnlyKeys are the full keys of the fields tagged mode:"sparse"
// (configs.SparseOnlyFields), with a changed value for each.
func sparseOnlyKeys(t *testing.T, ld *configs.Loaded) []string {
	t.Helper()
	var sets []string
	for _, path := range configs.SparseOnlyFields() {
		v := reflect.ValueOf(ld.Config).Elem()
		typ := v.Type()
		var key []string
		for _, i := range path {
			f := typ.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" {
				key = append(key, name)
			}
			v = v.Field(i)
			typ = f.Type
		}
		var val string
		switch v.Kind() {
		case reflect.Int:
			val = fmt.Sprint(v.Int() + 1)
		case reflect.Float64:
			val = fmt.Sprint(v.Float()*2 + 0.5)
		case reflect.String:
			if key[len(key)-1] == "sparse_pattern" {
				val = "2:8"
			} else {
				val = sparseKernel(t, ld)
			}
		default:
			t.Fatalf("%s: no changed value for a %s", strings.Join(key, "."), v.Kind())
		}
		sets = append(sets, strings.Join(key, ".")+"="+val)
	}
	return sets
}

// sparseKernel is a library kernel offered for fp16 sparse GEMMs.
func sparseKernel(t *testing.T, ld *configs.Loaded) string {
	t.Helper()
	for _, c := range ld.Config.Kernel.Candidates {
		if c.Supports(tensorcore.Sparse, tensorcore.FP16) {
			return c.Name()
		}
	}
	t.Fatal("no sparse fp16 kernel in the library")
	return ""
}

// denseRecords is the JSON of a run's dense records, with their cost
// left out when noCost: the cost (its area) is filled outside the cached
// part of a record, from the config of the run (runner.addCost).
func denseRecords(t *testing.T, rep *Report, noCost bool) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rep.Results {
		if noCost {
			r.Cost = results.Cost{}
		}
		r.Cache = ""
		if r.Mode == tensorcore.Dense {
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
	}
	return b.String()
}

// A key tagged sparse-only changes no dense record (so a dense record's
// cache key may leave it out), and does change the config's hash.
func TestSparseOnlyKeysLeaveDenseRecords(t *testing.T) {
	t.Parallel() // its own cache: runs of other caches never wait on it
	base := []string{"gpu.sm_count=4"}
	job := gemmJob([3]int{256, 256, 256})
	ld0, err := configs.Load(nil, base)
	if err != nil {
		t.Fatal(err)
	}
	want := denseRecords(t, run(t, job, base...), true)
	keys := sparseOnlyKeys(t, ld0)
	if len(keys) == 0 {
		t.Fatal("no field is tagged mode:\"sparse\"")
	}
	for _, set := range keys {
		ld, err := configs.Load(nil, append(append([]string{}, base...), set))
		if err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		if ld.Hash() == ld0.Hash() {
			t.Errorf("%s: the config's hash did not change", set)
		}
		if ld.SimulationHash(tensorcore.Dense) != ld0.SimulationHash(tensorcore.Dense) {
			t.Errorf("%s: the dense hash changed", set)
		}
		if got := denseRecords(t, run(t, job, append(append([]string{}, base...), set)...), true); got != want {
			t.Errorf("%s changes a dense record:\n got %s\nwant %s", set, got, want)
		}
	}
}

// A 4-point sweep of sparse-only keys and of selector_fan_in with the
// cache on: from the second point on, the dense records are cache hits and
// the sparse ones misses, and the hits are the records a run without the
// cache makes (their cost and energy too: metadata_bits_per_clk and the
// fan-in move the area, the fan-in the dense MMAs' operand paths).
func TestSparseOnlySweepHitsDense(t *testing.T) {
	t.Parallel() // its own cache: runs of other caches never wait on it
	c, err := simcache.Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	job := gemmJob([3]int{256, 256, 256}, [3]int{128, 256, 512})
	job.Cache = c
	for point, lat := range []int{1, 2, 3, 4} {
		sets := []string{"gpu.sm_count=4", fmt.Sprintf("tensorcore.fp16.mux_level_latency=%d", lat),
			fmt.Sprintf("tensorcore.int8.metadata_bits_per_clk=%d", 128*lat),
			fmt.Sprintf("tensorcore.fp16.selector_fan_in=%d", 4<<point)}
		rep := run(t, job, sets...)
		uncached := job
		uncached.Cache = nil
		if got, want := denseRecords(t, rep, false), denseRecords(t, run(t, uncached, sets...), false); got != want {
			t.Errorf("point %d: dense records from the cache\n%s\nwant\n%s", point+1, got, want)
		}
		for _, r := range rep.Results {
			want := "miss"
			if point > 0 && r.Mode == tensorcore.Dense {
				want = "hit"
			}
			if r.Cache != want {
				t.Errorf("point %d, %s %s: cache %q, want %q", point+1, r.Layer, r.Mode, r.Cache, want)
			}
		}
	}
}

// records is the JSON of a run's records, without their cache field.
func records(t *testing.T, rep *Report) []string {
	t.Helper()
	var out []string
	for _, r := range rep.Results {
		r.Cache = ""
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

// Under a locked clock the power and area sections set a record's energy,
// power and cost, never its timing, and selector_fan_in reaches a dense
// record only through the area layout (the muxes widen the tensor core,
// lengthening the operand paths). A run that changes one of them reads
// from the cache every record whose simulation it leaves alone, and the
// records it reads are byte for byte those a run without the cache makes
// under the changed config: energy, power, the note on a clock above the
// limit and the cost made again from the cached counts. Under
// power_capped the power sets the clock, and a power key misses.
func TestEnergyKeysReadSimulationsFromTheCache(t *testing.T) {
	t.Parallel() // its own cache: runs of other caches never wait on it
	c, err := simcache.Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	job := gemmJob([3]int{256, 256, 256}, [3]int{128, 256, 512})
	job.Cache = c
	base := []string{"gpu.sm_count=4"}
	uncached := job
	uncached.Cache = nil
	before := records(t, run(t, uncached, base...))
	run(t, job, base...) // fills the cache
	for _, tc := range []struct {
		set       string
		sparseHit bool
	}{
		{"power.energy.mma_pj_per_fma.fp16=2.5", true},
		{"power.data_activity=0.1", true},
		{"power.limit_w=5", true}, // every record above the limit: the note
		{"power.board_static_w=60", true},
		{"area.wire_pj_per_bit_mm=0.09", true},
		{"area.multiplier_um2.fp16=150", true},
		{"tensorcore.fp16.selector_fan_in=8", false},
	} {
		sets := append(append([]string{}, base...), tc.set)
		rep := run(t, job, sets...)
		want := records(t, run(t, uncached, sets...))
		got := records(t, rep)
		if len(got) != len(want) {
			t.Fatalf("%s: %d records, want %d", tc.set, len(got), len(want))
		}
		for i, r := range rep.Results {
			if got[i] != want[i] {
				t.Errorf("%s, %s %s: record from the cache\n%s\nwant\n%s", tc.set, r.Layer, r.Mode, got[i], want[i])
			}
			if want[i] == before[i] {
				t.Errorf("%s, %s %s: the key changes nothing in the record (the test proves nothing)", tc.set, r.Layer, r.Mode)
			}
			hit := r.Mode == tensorcore.Dense || tc.sparseHit
			if wantCache := map[bool]string{true: "hit", false: "miss"}[hit]; r.Cache != wantCache {
				t.Errorf("%s, %s %s: cache %q, want %q", tc.set, r.Layer, r.Mode, r.Cache, wantCache)
			}
		}
	}
	capped := append(append([]string{}, base...), "gpu.clock_policy=power_capped")
	run(t, job, capped...)
	for _, r := range run(t, job, append(capped, "power.energy.mma_pj_per_fma.fp16=2.5")...).Results {
		if r.Cache != "miss" {
			t.Errorf("power_capped, %s %s: a power key gave cache %q, want miss", r.Layer, r.Mode, r.Cache)
		}
	}
}

// Four runs at once, as a local sweep's points run, that differ in a
// sparse-only key: each dense record is simulated by one of them and read
// from the cache by the other three, which wait for it rather than
// simulate it again; every record is the one a run without the cache makes.
func TestConcurrentRunsSimulateASharedRecordOnce(t *testing.T) {
	t.Parallel() // its own cache: runs of other caches never wait on it
	c, err := simcache.Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	job := gemmJob([3]int{256, 256, 256}, [3]int{128, 256, 512})
	job.Cache = c
	sets := func(p int) []string {
		return []string{"gpu.sm_count=4", fmt.Sprintf("tensorcore.fp16.mux_level_latency=%d", p+1)}
	}
	reps := make([]*Report, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for p := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld, err := configs.Load(nil, sets(p))
			if err == nil {
				reps[p], err = Run(ld, job)
			}
			errs[p] = err
		}()
	}
	wg.Wait()
	misses := map[string]int{}
	for p, rep := range reps {
		if errs[p] != nil {
			t.Fatalf("point %d: %v", p+1, errs[p])
		}
		uncached := job
		uncached.Cache = nil
		want := records(t, run(t, uncached, sets(p)...))
		for i, r := range rep.Results {
			if got := records(t, rep)[i]; got != want[i] {
				t.Errorf("point %d, %s %s: record\n%s\nwant\n%s", p+1, r.Layer, r.Mode, got, want[i])
			}
			if r.Cache == "miss" {
				misses[r.Layer+" "+r.Mode.String()]++
			}
		}
	}
	for _, layer := range []string{"256x256x256", "128x256x512"} {
		if n := misses[layer+" dense"]; n != 1 {
			t.Errorf("%s dense: simulated by %d of the 4 runs, want 1", layer, n)
		}
		if n := misses[layer+" sparse"]; n != 4 {
			t.Errorf("%s sparse: simulated by %d of the 4 runs, want 4", layer, n)
		}
	}
}

// The sparse-only keys, derived from the tags (a key per precision
// written once as tensorcore.*.KEY), are the ones the user guide lists as
// left out of a dense record's key, and among them is every precision's
// sparse_pattern: a sparse_pattern sweep reuses the dense records.
func TestSparseOnlyKeysListed(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../docs/user-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(guide), "A dense record's key leaves out")
	section, _, _ = strings.Cut(section, "\n\n")
	seen := map[string]bool{}
	for _, set := range sparseOnlyKeys(t, ld) {
		key, _, _ := strings.Cut(set, "=")
		seen[key] = true
		for _, p := range tensorcore.Precisions {
			key = strings.Replace(key, "tensorcore."+p.String()+".", "tensorcore.*.", 1)
		}
		if !strings.Contains(section, "`"+key+"`") {
			t.Errorf("%s is sparse-only (tagged mode:\"sparse\"), but the user guide does not list it", key)
		}
	}
	for _, p := range tensorcore.Precisions {
		if k := "tensorcore." + p.String() + ".sparse_pattern"; !seen[k] {
			t.Errorf("%s is not sparse-only", k)
		}
	}
	t.Logf("sparse-only keys: %d", len(seen))
}
