package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/sweep"
	"github.com/stcsim/stcsim/sweep/internal/sweeptest"
	"github.com/stcsim/stcsim/sweep/store"
)

// twoLayers is two points of one workload of two GEMMs, dense and sparse.
const twoLayers = "workloads: [{gemms: [64x64x64, 128x64x64]}]\ngrid:\n  gpu.sm_count: [54, 108]\n"

// damagedCopy copies the store base to dir/name and runs stmts on the
// copy.
func damagedCopy(t *testing.T, base, dir, name string, stmts ...string) string {
	t.Helper()
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %s: %v", name, s, err)
		}
	}
	return p
}

// A store whose tables disagree with one another (a config, totals or
// results lost, a flat column that is not its record's) is refused by
// Check, store.CheckInputs and Merge, naming the store, the table and the
// point, and a merge writes nothing.
func TestCheckFindsInconsistentStores(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.db")
	fill(t, mustPlan(t, twoLayers), base, nil)
	if err := store.CheckInputs(base); err != nil {
		t.Fatalf("undamaged store: %v", err)
	}
	firstSparse := `(SELECT min(rowid) FROM results WHERE mode='sparse')`
	for _, c := range []struct {
		name  string
		stmts []string
		want  []string
	}{
		{"configs emptied", []string{`DELETE FROM configs`},
			[]string{"table configs", "config is missing", "gpu.sm_count="}},
		{"config edited", []string{`UPDATE configs SET config_yaml = config_yaml || '#'`},
			[]string{"table configs", "hashes to"}},
		{"totals emptied", []string{`DELETE FROM totals`},
			[]string{"table totals", "has no total", "mode dense"}},
		{"sparse total lost", []string{`DELETE FROM totals WHERE rowid IN (SELECT rowid FROM totals WHERE mode='sparse' LIMIT 1)`},
			[]string{"table totals", "has no total", "mode sparse"}},
		{"total speedup", []string{`UPDATE totals SET speedup = speedup * 2 WHERE mode='sparse'`},
			[]string{"table totals", "speedup is"}},
		{"time_us column", []string{`UPDATE results SET time_us = time_us * 2 WHERE rowid = 1`},
			[]string{"table results", "column time_us", "its record says", "layer "}},
		{"tflops column", []string{`UPDATE results SET tflops = 1 WHERE rowid = 2`},
			[]string{"table results", "column tflops"}},
		{"dram_gbps column", []string{`UPDATE results SET dram_gbps = dram_gbps + 1e-9 WHERE rowid = 1`},
			[]string{"table results", "column dram_gbps"}},
		{"speedup column", []string{`UPDATE results SET speedup = 9 WHERE rowid = ` + firstSparse},
			[]string{"table results", "column speedup"}},
		{"record edited with its column", []string{`UPDATE results SET time_us = time_us * 2,
			record = json_set(record, '$.time_us', json_extract(record, '$.time_us') * 2) WHERE rowid = 1`},
			[]string{"table results", "does not agree with itself", "time_us against cycles and clock"}},
		{"a layer lost", []string{`DELETE FROM results WHERE rowid = 1`},
			[]string{"other layers"}},
		{"a mode lost", []string{`DELETE FROM results WHERE mode = 'sparse'`},
			[]string{"has no results", "mode sparse"}},
		{"results without point", []string{`DELETE FROM points WHERE rowid = 1`},
			[]string{"table results", "no such point in table points"}},
		{"totals without point", []string{`DELETE FROM points WHERE rowid = 1`,
			`DELETE FROM results WHERE NOT EXISTS (SELECT 1 FROM points p
				WHERE p.config_hash = results.config_hash AND p.workload = results.workload)`},
			[]string{"table totals", "no such point in table points"}},
		{"modes edited", []string{`UPDATE points SET modes = 'dense' WHERE rowid = 1`},
			[]string{"table results", "not in mode sparse"}},
		{"modes unreadable", []string{`UPDATE points SET modes = 'fast' WHERE rowid = 1`},
			[]string{"table points", "fast"}},
		{"grid rewritten", []string{`UPDATE points SET grid = '[["gpu.sm_count","7"]]' WHERE grid LIKE '%"54"%'`},
			[]string{"table points", `grid says gpu.sm_count="7" but the point's config has "54"`}},
		{"grid null", []string{`UPDATE points SET grid = 'null' WHERE rowid = 1`},
			[]string{"table points", "grid is null"}},
		{"grid value of 1 MB", []string{`UPDATE points SET grid = '[["gpu.sm_count","' || printf('%.*c', 1048576, 'x') || '"]]' WHERE rowid = 1`},
			[]string{"table points", "above 1024 bytes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := t.TempDir()
			bad := damagedCopy(t, base, sub, "bad.db", c.stmts...)
			check := func(what string, err error) {
				t.Helper()
				var in *store.InputError
				if what != "Check" && !errors.As(err, &in) {
					t.Errorf("%s: %v, want an InputError", what, err)
				}
				if err == nil {
					return
				}
				for _, w := range append([]string{bad}, c.want...) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %q does not say %q", what, err, w)
					}
				}
			}
			check("CheckInputs", store.CheckInputs(bad))
			ro, err := store.OpenReadOnly(bad)
			if err != nil {
				t.Fatal(err)
			}
			check("Check", ro.Check())
			if err := ro.Close(); err != nil {
				t.Error(err)
			}
			out, err := store.Open(filepath.Join(sub, "out.db"))
			if err != nil {
				t.Fatal(err)
			}
			check("Merge", out.Merge(base, bad))
			if rows, _ := out.Rows(); len(rows) != 0 {
				t.Errorf("a refused merge wrote %d rows", len(rows))
			}
			out.Close()
		})
	}
}

// store.CheckInputs (what stcsim merge runs first) refuses one store given
// twice, whatever the spelling, and through symbolic and hard links;
// copies are distinct inputs.
func TestCheckInputsRefusesAStoreTwice(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	fill(t, mustPlan(t, twoPoints), a, nil)
	sym, hard := filepath.Join(dir, "sym.db"), filepath.Join(dir, "hard.db")
	if err := os.Symlink("a.db", sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	copied := damagedCopy(t, a, dir, "copy.db")
	for _, again := range []string{a, dir + "/./a.db", sym, hard} {
		err := store.CheckInputs(a, copied, again)
		var in *store.InputError
		if !errors.As(err, &in) || !strings.Contains(err.Error(), "same store") ||
			!strings.Contains(err.Error(), a+" and "+again) {
			t.Errorf("%s after %s: %v, want both named as the same store", again, a, err)
		}
	}
	if err := store.CheckInputs(a, copied); err != nil {
		t.Errorf("a store and its copy: %v", err)
	}
}

// listing is every file of dir with its size, modification time and
// contents (not those of -shm files, SQLite's shared memory).
func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %v", e.Name(), info.Size(), info.ModTime()))
		if !e.IsDir() && !strings.HasSuffix(e.Name(), "-shm") {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out[len(out)-1] += " " + string(b)
		}
	}
	sort.Strings(out)
	return out
}

func sameListing(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		name := func(l []string) []string {
			var n []string
			for _, s := range l {
				n = append(n, strings.SplitN(s, " ", 2)[0])
			}
			return n
		}
		t.Errorf("%s changed the directory: %v, was %v", what, name(got), name(want))
	}
}

// Reading a store (export, plot, merge input, sweep --dry-run) creates
// no file beside it, whether it is closed (immutable=1), being written
// (SQLite's locks; the WAL's commits are read), truncated, or has a WAL
// that cannot be read without creating PATH-shm (refused); and a store
// written while it is read with immutable=1 fails at Close.
func TestReadOnlyOpensLeaveNoFiles(t *testing.T) {
	dir, outDir := t.TempDir(), t.TempDir()
	p := mustPlan(t, twoPoints)
	a := filepath.Join(dir, "a.db")
	fill(t, p, a, nil)
	b, _ := os.ReadFile(a)
	trunc := filepath.Join(dir, "trunc.db")
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	before := listing(t, dir)

	ro, err := store.OpenReadOnly(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Check(); err != nil {
		t.Fatal(err)
	}
	if rows, err := ro.Rows(); err != nil || len(rows) != 4 {
		t.Errorf("%d rows, %v", len(rows), err)
	}
	if err := ro.Close(); err != nil {
		t.Error(err)
	}
	if err := store.CheckInputs(a); err != nil {
		t.Error(err)
	}
	if err := store.CheckStore(a, sweep.IDs(p.Units()), p.Modes); err != nil {
		t.Error(err)
	}
	if err := store.CheckInputs(trunc); err == nil {
		t.Error("a truncated store was accepted")
	}
	out, err := store.Open(filepath.Join(outDir, "out.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Merge(a); err != nil {
		t.Error(err)
	}
	out.Close()
	sameListing(t, "reading closed stores", listing(t, dir), before)

	// A writer holds the store, its commits still in the WAL.
	w := filepath.Join(dir, "w.db")
	st, err := store.Open(w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Run(context.Background(), p, st, sweep.Options{Run: sweeptest.FakeRun}); err != nil {
		t.Fatal(err)
	}
	held := listing(t, dir)
	if !strings.Contains(strings.Join(held, "\n"), "w.db-wal") {
		t.Fatalf("the writer has no WAL: %v", held)
	}
	ro, err = store.OpenReadOnly(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Check(); err != nil {
		t.Error(err)
	}
	if rows, err := ro.Rows(); err != nil || len(rows) != 4 {
		t.Errorf("store being written: %d rows, %v", len(rows), err)
	}
	if err := ro.Close(); err != nil {
		t.Error(err)
	}
	if err := store.CheckInputs(w); err != nil {
		t.Error(err)
	}
	sameListing(t, "reading a store being written", listing(t, dir), held)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"w.db-wal", "w.db-shm"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left after the writer closed", f)
		}
	}

	// Written while read with immutable=1: Close says so.
	ro, err = store.OpenReadOnly(a)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, mustPlan(t, "workloads: [{gemms: [64x64x64]}]\ngrid:\n  gpu.sm_count: [32]\n"), a, nil)
	if err := ro.Close(); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("store written while read: Close: %v", err)
	}

	// A WAL without its -shm is refused, nothing created.
	x := filepath.Join(t.TempDir(), "x.db")
	os.WriteFile(x, b, 0o644)
	os.WriteFile(x+"-wal", nil, 0o644)
	xb := listing(t, filepath.Dir(x))
	_, err = store.OpenReadOnly(x)
	var in *store.InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "-wal exists without") {
		t.Errorf("WAL without -shm: %v", err)
	}
	sameListing(t, "a WAL without -shm", listing(t, filepath.Dir(x)), xb)
}
