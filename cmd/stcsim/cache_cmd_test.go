package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A second run of the same job reuses every record: the numbers are
// byte-identical, only the cache field says hit; a changed config key is
// a miss; a corrupt entry is simulated again with one warning.
func TestRunCacheReusesRecords(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--gemm", "512x512x512", "--mode", "both", "--format", "json",
		"--set", "gpu.sm_count=8", "--cache", dir}
	first, err1, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, err1)
	}
	second, err2, code := capture(t, func() int { return dispatch(args) })
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, err2)
	}
	if !strings.Contains(err1, "0 of 2 records reused, 2 simulated") ||
		!strings.Contains(err2, "2 of 2 records reused, 0 simulated") {
		t.Errorf("summaries %q / %q", err1, err2)
	}
	if strings.Count(first, `"cache": "miss"`) != 2 || strings.Count(second, `"cache": "hit"`) != 2 {
		t.Errorf("records do not say miss then hit:\n%s", second)
	}
	if strings.ReplaceAll(first, `"cache": "miss"`, `"cache": "hit"`) != second {
		t.Error("a cached record differs from the simulated one beyond its cache field")
	}
	// Another value of a key the run reads: simulated again.
	_, err3, _ := capture(t, func() int {
		return dispatch(append(append([]string{}, args...), "--set", "sm.barrier_latency=40"))
	})
	if !strings.Contains(err3, "0 of 2 records reused") {
		t.Errorf("a changed key was served from the cache: %q", err3)
	}
	if !strings.Contains(err1, "(2 new row)") || !strings.Contains(err3, "(2 config changed)") {
		t.Errorf("miss causes %q / %q", err1, err3)
	}
	// Damage every entry: each is a miss, refused with a warning, and the
	// numbers come back the same.
	entries, _ := filepath.Glob(filepath.Join(dir, "*", "*.entry"))
	for _, e := range entries {
		os.WriteFile(e, []byte("stcsim-cache-v2\nnot a MAC"), 0o644)
	}
	again, err4, _ := capture(t, func() int { return dispatch(args) })
	if strings.Count(err4, "refused") != 3 || !strings.Contains(err4, "0 of 2 records reused, 2 simulated (2 refused)") {
		t.Errorf("damaged entries: %q", err4)
	}
	if again != first {
		t.Error("after damaged entries the records differ from the first run")
	}
	// cache info and clean
	info, _, code := capture(t, func() int {
		return dispatch([]string{"cache", "info", "--cache", dir, "--format", "json"})
	})
	var st struct{ Entries int }
	if code != exitOK || json.Unmarshal([]byte(info), &st) != nil || st.Entries < 2 {
		t.Errorf("cache info: exit %d %s", code, info)
	}
	out, _, code := capture(t, func() int { return dispatch([]string{"cache", "clean", "--cache", dir}) })
	if code != exitOK || !strings.Contains(out, "removed") {
		t.Errorf("cache clean: exit %d %q", code, out)
	}
	// --no-cache: nothing read, nothing said.
	_, err5, _ := capture(t, func() int { return dispatch(append(append([]string{}, args...), "--no-cache")) })
	if strings.Contains(err5, "cache:") {
		t.Errorf("--no-cache printed %q", err5)
	}
	if code := dispatch([]string{"cache", "wipe", "--cache", dir}); code != exitUsage {
		t.Errorf("cache wipe: exit %d, want %d", code, exitUsage)
	}
}

// A sweep run twice over one cache: the second reuses every record and
// its store exports byte-identical results (the store keeps no cache
// state).
func TestSweepCacheReusesRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	dir := t.TempDir()
	spec := writeFile(t, dir, "tiny.yaml", "workloads: [{name: tiny, gemms: [256x256x256]}]\n"+
		"set: [gpu.sm_count=8]\n"+
		"grid: {sm.barrier_latency: [20, 40]}\n")
	cache := filepath.Join(dir, "cache")
	var errs [2]string
	for i, name := range []string{"a", "b"} {
		_, stderr, code := capture(t, func() int {
			return dispatch([]string{"sweep", spec, "--db", filepath.Join(dir, name+".db"),
				"--cache", cache, "--jobs", "1"})
		})
		if code != exitOK {
			t.Fatalf("sweep %s: exit %d: %s", name, code, stderr)
		}
		errs[i] = stderr
		if code := dispatch([]string{"results", "export", filepath.Join(dir, name+".db"),
			"--out", filepath.Join(dir, name+".csv")}); code != exitOK {
			t.Fatalf("export %s: exit %d", name, code)
		}
	}
	if !strings.Contains(errs[0], "0 of 4 records reused") || !strings.Contains(errs[1], "4 of 4 records reused") {
		t.Errorf("cache summaries %q / %q", errs[0], errs[1])
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a.csv"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.csv"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("the cached sweep's store differs:\n%s\nvs\n%s", a, b)
	}
}
