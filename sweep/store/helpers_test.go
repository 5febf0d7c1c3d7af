package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stcsim/stcsim/sweep"
	"github.com/stcsim/stcsim/sweep/internal/sweeptest"
	"github.com/stcsim/stcsim/sweep/store"
)

// The store's tests make their stores as a sweep does: a sweep file
// planned by package sweep, each unit run by sweeptest.FakeRun (or run)
// and committed to the store at db.

// mustPlan plans the sweep file text.
func mustPlan(t *testing.T, spec string) *sweep.Plan {
	t.Helper()
	s, err := sweep.Parse([]byte(spec), filepath.Join(t.TempDir(), "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(sweep.Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fill runs every unit of p into the store at db (created if need be)
// with run, sweeptest.FakeRun when nil.
func fill(t *testing.T, p *sweep.Plan, db string, run sweep.RunFunc) {
	t.Helper()
	if run == nil {
		run = sweeptest.FakeRun
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sweep.Run(context.Background(), p, st, sweep.Options{Jobs: 2, Run: run})
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// storedRows are the rows of a store of sweeptest.Spec.
func storedRows(t *testing.T) []store.Row {
	t.Helper()
	db := filepath.Join(t.TempDir(), "s.db")
	fill(t, mustPlan(t, sweeptest.Spec), db, nil)
	st, err := store.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Rows()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
