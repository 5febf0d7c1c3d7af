package store_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep/internal/sweeptest"
	"github.com/stcsim/stcsim/sweep/store"
)

const twoPoints = "workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count: [54, 108]\n"

// Stores are read without writing: a foreign SQLite file or a file that
// is not SQLite is "not an stcsim results store", and is left exactly as
// it was; a read-only store can be exported and merged (item 8).
func TestForeignFilesAreNotStores(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.sqlite3")
	db, err := sql.Open("sqlite3", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE trace (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	text := filepath.Join(dir, "notes.db")
	os.WriteFile(text, []byte("not sqlite"), 0o644)
	for _, p := range []string{foreign, text} {
		before, _ := os.ReadFile(p)
		if _, err := store.OpenReadOnly(p); !errors.Is(err, store.ErrNotStore) {
			t.Errorf("store.OpenReadOnly(%s): %v, want ErrNotStore", p, err)
		}
		if _, err := store.Open(p); !errors.Is(err, store.ErrNotStore) {
			t.Errorf("store.Open(%s): %v, want ErrNotStore", p, err)
		}
		if err := store.CheckInputs(p); !errors.Is(err, store.ErrNotStore) {
			t.Errorf("store.CheckInputs(%s): %v", p, err)
		}
		after, _ := os.ReadFile(p)
		if string(before) != string(after) {
			t.Errorf("%s was modified", p)
		}
		if _, err := os.Stat(p + "-wal"); err == nil {
			t.Errorf("%s got a WAL file", p)
		}
	}
	ro := filepath.Join(dir, "ro.db")
	fill(t, mustPlan(t, twoPoints), ro, nil)
	os.Chmod(ro, 0o444)
	st, err := store.OpenReadOnly(ro)
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := st.Rows(); err != nil || len(rows) != 4 {
		t.Errorf("read-only store: %d rows, %v", len(rows), err)
	}
	st.Close()
	out, err := store.Open(filepath.Join(dir, "out.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Merge(ro); err != nil {
		t.Errorf("merge of a read-only store: %v", err)
	}
}

// Paths with URI characters open the file named, not a truncated one
// (item 9).
func TestStorePathsAreEscaped(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"res#1.db", "a?b.db", "p%41.db"} {
		p := filepath.Join(dir, name)
		fill(t, mustPlan(t, twoPoints), p, nil)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
		st, err := store.OpenReadOnly(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows, err := st.Rows()
		st.Close()
		if err != nil || len(rows) != 4 {
			t.Errorf("%s: %d rows, %v", name, len(rows), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch strings.TrimSuffix(strings.TrimSuffix(e.Name(), "-wal"), "-shm") {
		case "res#1.db", "a?b.db", "p%41.db":
		default:
			t.Errorf("stray file %s", e.Name())
		}
	}
}

// A merge checks every input first: a damaged record or two stores with
// different results for one point fail before anything is written
// (item 10).
func TestMergeChecksBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	fill(t, mustPlan(t, twoPoints), a, nil)
	other := func(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
		rep, err := sweeptest.FakeRun(ld, job)
		for i := range rep.Results { // twice as slow, and consistent
			r := &rep.Results[i]
			r.Cycles, r.TimeUS, r.TFLOPS, r.DRAMGBps = 2*r.Cycles, 2*r.TimeUS, r.TFLOPS/2, r.DRAMGBps/2
		}
		return rep, err
	}
	fill(t, mustPlan(t, twoPoints), b, other)
	out := filepath.Join(dir, "out.db")
	st, err := store.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Merge(a, b)
	var in *store.InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "different") {
		t.Errorf("conflicting merge: %v", err)
	}
	if rows, _ := st.Rows(); len(rows) != 0 {
		t.Errorf("a failed merge wrote %d rows", len(rows))
	}
	st.Close()

	bad := filepath.Join(dir, "bad.db")
	fill(t, mustPlan(t, twoPoints), bad, nil)
	db, _ := sql.Open("sqlite3", "file:"+bad)
	db.Exec(`UPDATE results SET record='{broken' WHERE rowid=1`)
	db.Close()
	if err := store.CheckInputs(bad); err == nil || !strings.Contains(err.Error(), "unreadable result record") {
		t.Errorf("damaged input: %v", err)
	}
	db, _ = sql.Open("sqlite3", "file:"+bad)
	db.Exec(`DELETE FROM results`)
	db.Close()
	if err := store.CheckInputs(bad); err == nil || !strings.Contains(err.Error(), "has no results") {
		t.Errorf("input with a point without results: %v", err)
	}
}
