package sim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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
			val = sparseKernel(t, ld)
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
		if ld.HashFor(tensorcore.Dense) != ld0.HashFor(tensorcore.Dense) {
			t.Errorf("%s: the dense hash changed", set)
		}
		if got := denseRecords(t, run(t, job, append(append([]string{}, base...), set)...), true); got != want {
			t.Errorf("%s changes a dense record:\n got %s\nwant %s", set, got, want)
		}
	}
}

// A 4-point sweep of sparse-only keys with the cache on: from the second
// point on, the dense records are cache hits and the sparse ones misses,
// and the hits are the records a run without the cache makes (their cost
// too: metadata_bits_per_clk moves the area).
func TestSparseOnlySweepHitsDense(t *testing.T) {
	c, err := simcache.Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	job := gemmJob([3]int{256, 256, 256}, [3]int{128, 256, 512})
	job.Cache = c
	for point, lat := range []int{1, 2, 3, 4} {
		sets := []string{"gpu.sm_count=4", fmt.Sprintf("tensorcore.fp16.mux_level_latency=%d", lat),
			fmt.Sprintf("tensorcore.int8.metadata_bits_per_clk=%d", 128*lat)}
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
