package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --dry-run checks --db as the run does: a file that is not a store, a
// directory, or a store holding the sweep's points with other GEMMs or
// modes exit 2 in both, before anything runs, and without the resume
// hint that could never help.
func TestSweepChecksStoreBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "s.yaml", "workloads: [{name: tiny, gemms: [64x64x64]}]\n")
	other := writeFile(t, dir, "other.yaml", "workloads: [{name: tiny, gemms: [32x64x64]}]\n")
	dense := writeFile(t, dir, "dense.yaml", "workloads: [{name: tiny, gemms: [64x64x64]}]\nmodes: [dense]\n")
	rnd := writeFile(t, dir, "rand.db", "\x93\x11\xff\xfe not an SQLite file \x00\x01")
	text := writeFile(t, dir, "afile", "hello\n")
	db := filepath.Join(dir, "s.db")
	if _, errOut, code := capture(t, func() int {
		return dispatch([]string{"sweep", spec, "--db", db, "--quiet", "--jobs", "1"})
	}); code != exitOK {
		t.Fatalf("first sweep: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name, spec, db, want string
	}{
		{"random bytes", spec, rnd, "not an stcsim results store"},
		{"text file", spec, text, "not an stcsim results store"},
		{"directory", spec, dir, "is a directory"},
		{"other GEMMs", other, db, "with different GEMMs"},
		{"other modes", dense, db, "this sweep asks for dense"},
	} {
		for _, dry := range []bool{true, false} {
			args := []string{"sweep", tc.spec, "--db", tc.db, "--quiet", "--jobs", "1"}
			if dry {
				args = append(args, "--dry-run")
			}
			out, errOut, code := capture(t, func() int { return dispatch(args) })
			if code != exitUsage || !strings.Contains(errOut, tc.want) ||
				strings.Contains(errOut, "resume") || strings.Contains(out, "all configs valid") {
				t.Errorf("%s (dry run %v): exit %d, stdout %q, stderr %q; want exit 2 and %q",
					tc.name, dry, code, out, errOut, tc.want)
			}
		}
	}
	// The same sweep again is a resume: the dry run passes.
	if out, errOut, code := capture(t, func() int {
		return dispatch([]string{"sweep", spec, "--db", db, "--dry-run"})
	}); code != exitOK || !strings.Contains(out, "all configs valid") {
		t.Errorf("dry run of the same sweep: exit %d: %s %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(rnd); !strings.Contains(string(b), "not an SQLite file") {
		t.Error("rand.db was changed")
	}
}
