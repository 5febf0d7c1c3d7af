package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stcsim/stcsim"
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/modelid"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// cacheRun runs `stcsim run` with args and the cache dir, and returns its
// JSON records and stderr.
func cacheRun(t *testing.T, dir string, args ...string) ([]map[string]any, string) {
	t.Helper()
	args = append([]string{"run", "--format", "json", "--cache", dir, "--set", "gpu.sm_count=4"}, args...)
	out, stderr, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var rep struct{ Results []map[string]any }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return rep.Results, stderr
}

// A renamed trace with renamed layers (and another count and note)
// reuses every record: the key holds the GEMM's shape and operands, not
// names; each record read is labelled with the reading run's names and
// count, and its numbers are the first run's.
func TestRenamedTraceReusesEveryRecord(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	hdr := "name,m,n,k,precision,sparsity,count,batch,note\n"
	a := writeFile(t, dir, "block.csv", hdr+"conv1,256,256,128,fp16,2:4,1,1,first\nfc,128,256,256,fp16,2:4,2,1,\n")
	b := writeFile(t, dir, "my-model.csv", hdr+"stem,256,256,128,fp16,2:4,3,1,renamed\nhead,128,256,256,fp16,2:4,2,1,\n")
	first, _ := cacheRun(t, cache, "--workload", a, "--mode", "both")
	second, stderr := cacheRun(t, cache, "--workload", b, "--mode", "both")
	if !strings.Contains(stderr, "4 of 4 records reused, 0 simulated") {
		t.Fatalf("renamed trace: %q", stderr)
	}
	names := map[string]string{"conv1": "stem", "fc": "head"}
	for i, r := range second {
		want := first[i]
		if r["layer"] != names[want["layer"].(string)] || r["workload"] != "my-model" || r["cache"] != "hit" {
			t.Errorf("record %d: labelled %v/%v (%v), want my-model/%s", i, r["workload"], r["layer"], r["cache"], names[want["layer"].(string)])
		}
		if i < 2 && (r["count"] != 3.0 || !strings.HasPrefix(r["note"].(string), "renamed")) {
			t.Errorf("record %d: count %v note %q, want the reading row's", i, r["count"], r["note"])
		}
		for _, f := range []string{"cycles", "time_us", "kernel", "dram_read_bytes", "energy_uj"} {
			if r[f] != want[f] {
				t.Errorf("record %d: %s %v, want %v", i, f, r[f], want[f])
			}
		}
	}
}

// A change of tensorcore.fp16.sparse_pattern alone reuses the dense
// record (a dense simulation reads no pattern) and simulates the sparse.
func TestSparsePatternChangeReusesTheDenseRecord(t *testing.T) {
	cache := t.TempDir()
	cacheRun(t, cache, "--gemm", "256x256x256", "--mode", "both")
	recs, stderr := cacheRun(t, cache, "--gemm", "256x256x256", "--mode", "both",
		"--set", "tensorcore.fp16.sparse_pattern=2:8")
	if !strings.Contains(stderr, "1 of 2 records reused, 1 simulated (1 config changed)") {
		t.Errorf("sparse_pattern change: %q", stderr)
	}
	for _, r := range recs {
		if want := map[string]string{"dense": "hit", "sparse": "miss"}[r["mode"].(string)]; r["cache"] != want {
			t.Errorf("%s record: cache %v, want %s", r["mode"], r["cache"], want)
		}
	}
}

// A sweep point equal to an earlier run (same config, same GEMM, under
// another workload name) reuses the run's records, and the sweep's
// statistics reach `cache stats`.
func TestSweepPointReusesAnEarlierRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	cacheRun(t, cache, "--gemm", "256x256x256", "--mode", "both")
	spec := writeFile(t, dir, "point.yaml", "workloads: [{name: tiny, gemms: [256x256x256]}]\n"+
		"grid: {gpu.sm_count: [4, 8]}\n")
	_, stderr, code := capture(t, func() int {
		return dispatch([]string{"sweep", spec, "--db", filepath.Join(dir, "s.db"), "--cache", cache, "--jobs", "1"})
	})
	if code != exitOK || !strings.Contains(stderr, "2 of 4 records reused, 2 simulated (2 config changed)") {
		t.Errorf("sweep after run: exit %d %q", code, stderr)
	}
	out, _, code := capture(t, func() int { return dispatch([]string{"cache", "stats", "--cache", cache}) })
	if code != exitOK || !strings.Contains(out, "2 commands") ||
		!strings.Contains(out, "all: 6 records, 2 reused, 4 simulated (2 new row, 2 config changed)") ||
		!strings.Contains(out, `last ("sweep"`) {
		t.Errorf("cache stats: exit %d\n%s", code, out)
	}
}

// A one-line change to a simulator package misses every record: the
// cache's model identity is made from the simulator's source as this
// test binary embeds it, once as built and once with one line added to
// one file of a package the simulator imports.
func TestOneLineModelChangeMissesEveryRecord(t *testing.T) {
	cache := t.TempDir()
	cacheRun(t, cache, "--gemm", "256x256x256", "--mode", "both")
	src := fstest.MapFS{}
	fs.WalkDir(stcsim.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := fs.ReadFile(stcsim.Source, p)
			src[p] = &fstest.MapFile{Data: data}
		}
		return err
	})
	f := "tensorcore/config.go"
	src[f] = &fstest.MapFile{Data: append(src[f].Data, "// one line\n"...)}
	defer func(id func() (string, error)) { modelID = id }(modelID)
	modelID = func() (string, error) { return modelid.Of(src, nil, "go") }
	if _, stderr := cacheRun(t, cache, "--gemm", "256x256x256", "--mode", "both"); !strings.Contains(stderr, "0 of 2 records reused, 2 simulated (2 model changed)") {
		t.Errorf("a changed model: %q", stderr)
	}
	if _, stderr := cacheRun(t, cache, "--gemm", "256x256x256", "--mode", "both"); !strings.Contains(stderr, "2 of 2 records reused") {
		t.Errorf("the changed model's second run: %q", stderr)
	}
}

// The sweep's estimate (its --dry-run list, its work warning) counts
// only the records the cache would not serve: none of a run's records
// after the run, the sparse ones alone after a dense run, all with an
// empty cache.
func TestSweepEstimateLeavesOutCachedRecords(t *testing.T) {
	cache := t.TempDir()
	sc, err := simcache.Open(cache, 0)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := modelID()
	ld, err := configs.Load(nil, []string{"gpu.sm_count=4"})
	if err != nil {
		t.Fatal(err)
	}
	trace := &workloads.Trace{Name: "tiny", GEMMs: []workloads.GEMM{{Name: "a", M: 256, N: 256, K: 256,
		Precision: tensorcore.FP16, Sparsity: "2:4", Count: 1, Batch: 1}}}
	job := sim.Job{Workloads: []*workloads.Trace{trace}, Modes: tensorcore.Modes}
	prep, err := sim.Prepare(ld.Config, job)
	if err != nil {
		t.Fatal(err)
	}
	sparseOnly, err := sim.Prepare(ld.Config, sim.Job{Workloads: job.Workloads, Modes: []tensorcore.Mode{tensorcore.Sparse}})
	if err != nil {
		t.Fatal(err)
	}
	whole, sparse := prep.Work(), sparseOnly.Work()
	est := &unitEstimates{work: map[unitKey]float64{}, cache: sc, salt: id}
	for _, step := range []struct {
		run  string
		want float64
	}{{"", whole}, {"dense", sparse}, {"both", 0}} {
		if step.run != "" {
			cacheRun(t, cache, "--gemm", "256x256x256", "--mode", step.run)
		}
		got, err := est.uncached(ld, prep, whole)
		if err != nil || got != step.want {
			t.Errorf("after a %q run: %g (%v), want %g (whole %g)", step.run, got, err, step.want, whole)
		}
	}
	dir := t.TempDir()
	spec := writeFile(t, dir, "p.yaml", "workloads: [{name: tiny, gemms: [256x256x256]}]\n"+
		"set: [gpu.sm_count=4]\n")
	out, stderr, code := capture(t, func() int {
		return dispatch([]string{"sweep", spec, "--dry-run", "--cache", cache, "--db", filepath.Join(dir, "p.db")})
	})
	if code != exitOK || !strings.Contains(out, "~0s\n") || !strings.Contains(out, "less the records the simulation cache holds") {
		t.Errorf("dry run: exit %d\n%s%s", code, out, stderr)
	}
}

// A directory the user named (--cache, $STCSIM_CACHE) that holds their
// files and no marker stops the command (exit 2, nothing run); the
// default directory, which nobody named, only turns the cache off.
func TestForeignCacheDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv(cacheEnv, "")
	os.MkdirAll(filepath.Join(home, "stcsim"), 0o755)
	writeFile(t, filepath.Join(home, "stcsim"), "thesis.tex", "x")
	args := []string{"run", "--gemm", "128x128x128", "--mode", "dense", "--set", "gpu.sm_count=2"}
	_, stderr, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK || !strings.Contains(stderr, "the simulation cache is off") {
		t.Errorf("default directory: exit %d %q", code, stderr)
	}
	_, stderr, code = capture(t, func() int {
		return dispatch(append(args, "--cache", filepath.Join(home, "stcsim")))
	})
	if code != exitUsage || !strings.Contains(stderr, "thesis.tex") || strings.Contains(stderr, "GEMMs simulated") {
		t.Errorf("named directory: exit %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "stcsim", "thesis.tex")); err != nil {
		t.Error(err)
	}
}
