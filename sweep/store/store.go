package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
)

// schemaVersion is stored in the meta table; a store of another version is
// refused rather than misread.
const schemaVersion = "1"

// schema is the results store. A point (config_hash, workload) is
// committed in one transaction together with its results and totals, so a
// row in points means the point's results are complete.
const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS configs (
	config_hash TEXT PRIMARY KEY,
	config_yaml TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
	config_hash   TEXT NOT NULL,
	workload      TEXT NOT NULL,
	workload_hash TEXT NOT NULL,
	modes         TEXT NOT NULL,
	grid          TEXT NOT NULL,
	tool_version  TEXT NOT NULL,
	PRIMARY KEY (config_hash, workload)
);
CREATE TABLE IF NOT EXISTS results (
	config_hash TEXT NOT NULL,
	workload    TEXT NOT NULL,
	layer       TEXT NOT NULL,
	mode        TEXT NOT NULL,
	seq         INTEGER NOT NULL,
	time_us     REAL NOT NULL,
	tflops      REAL NOT NULL,
	dram_gbps   REAL NOT NULL,
	speedup     REAL NOT NULL,
	record      TEXT NOT NULL,
	PRIMARY KEY (config_hash, workload, layer, mode)
);
CREATE TABLE IF NOT EXISTS totals (
	config_hash TEXT NOT NULL,
	workload    TEXT NOT NULL,
	mode        TEXT NOT NULL,
	time_us     REAL NOT NULL,
	speedup     REAL NOT NULL,
	PRIMARY KEY (config_hash, workload, mode)
);
`

// Store is an SQLite results store. Its methods are safe for concurrent
// use, and several processes may write one store: SQLite's locking, WAL
// mode and a busy timeout serialise their transactions.
type Store struct {
	path     string
	db       *sql.DB
	mu       sync.Mutex // serialises this process's write transactions
	readOnly bool
	snap     os.FileInfo // read-only, immutable=1: the file at the open
}

// ErrNotStore is a file that is not an stcsim results store (another
// SQLite database, a trace, any other file).
var ErrNotStore = errors.New("not an stcsim results store")

// InputError is a problem with the stores given to a command (not an
// stcsim store, damaged, in conflict with another): bad input, found
// before anything is written.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Open opens or creates the store at path for writing. An existing
// non-empty file must be an stcsim store: it is checked read-only before
// anything is written to it.
//
// Several writers may open one new store at once (shards, or sweeps
// started together): while one creates it, another can find the file
// locked or its tables not there yet. Such an open is tried again, for up
// to openWait, before its error is returned.
func Open(path string) (*Store, error) {
	deadline := time.Now().Add(openWait)
	for {
		s, err := openOnce(path)
		if err == nil || !transientOpen(err) || time.Now().After(deadline) {
			return s, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openWait bounds how long Open retries a store another writer is
// creating.
const openWait = 10 * time.Second

// transientOpen reports whether an open failed only because another
// writer held the file: SQLite's busy or locked.
func transientOpen(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

func openOnce(path string) (*Store, error) {
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("store %s: not a regular file: %w", path, ErrNotStore)
		}
		if st.Size() > 0 {
			if err := probeStore(path); err != nil {
				return nil, err
			}
		}
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "60000")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite3", dsn(path, q))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{path: path, db: db}
	if err := s.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// probeStore checks, without writing, that an existing file is an stcsim
// store or an SQLite database without tables (a store another writer is
// creating right now). It reads under SQLite's locks (a writer's
// connection, not OpenReadOnly's immutable one, whose reads can tear
// while another writer checkpoints), so the store's tables and its meta
// row, created in one transaction, are seen all or none; a busy or locked
// file is transient (Open tries again).
func probeStore(path string) error {
	q := url.Values{}
	q.Set("_busy_timeout", "60000")
	db, err := sql.Open("sqlite3", dsn(path, q))
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	defer db.Close()
	notStore := func(err error) error {
		if transientOpen(err) {
			return err
		}
		return fmt.Errorf("store %s: %w (%v)", path, ErrNotStore, err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return notStore(err)
	}
	if n == 0 {
		return nil
	}
	var v string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&v); err != nil {
		return notStore(err)
	}
	if v != schemaVersion {
		return fmt.Errorf("store %s: store schema version %s, this stcsim reads %s", path, v, schemaVersion)
	}
	return nil
}

// dsn is the SQLite URI of a file path: characters that a URI gives a
// meaning to (%, ?, #) are escaped, so that "res#1.db" opens res#1.db.
func dsn(path string, q url.Values) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + q.Encode()
}

// OpenExisting opens a store that must already exist, for writing.
func OpenExisting(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return Open(path)
}

// OpenReadOnly opens an existing store without writing to it (exports,
// plots, merge inputs): a file that is not an stcsim store is
// ErrNotStore, and nothing is created or converted, nor left beside it:
// see readOnlyParams. A store opened with immutable=1 is compared with
// its state at the open when it is closed (Close fails if another
// process wrote it meanwhile).
func OpenReadOnly(path string) (*Store, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return nil, fmt.Errorf("store %s: %w", path, ErrNotStore)
	}
	q, snap, err := readOnlyParams(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", dsn(path, q))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{path: path, db: db, readOnly: true, snap: snap}
	var v string
	err = db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&v)
	if err == nil && v != schemaVersion {
		err = fmt.Errorf("store schema version %s, this stcsim reads %s", v, schemaVersion)
	} else if err != nil {
		err = fmt.Errorf("%w (%v)", ErrNotStore, err)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return s, nil
}

// readOnlyParams chooses how to read the store at path without creating
// or changing any file beside it. A reader that follows SQLite's WAL
// protocol (mode=ro) needs PATH-wal and PATH-shm and creates them when
// they are missing (and, being read-only, cannot delete them again), so:
//
//   - PATH-wal and PATH-shm both exist (a sweep is writing the store, or
//     one was killed): read with SQLite's locks (mode=ro). The reader
//     sees a consistent snapshot including the commits still in the WAL,
//     and creates nothing since both files are there.
//   - no PATH-wal: open with immutable=1, which reads the main file alone
//     and takes no locks. That is safe here because every connection to
//     a WAL store keeps PATH-wal in place while it is open (the last one
//     to close checkpoints the WAL into the main file, then deletes it),
//     so no PATH-wal means no writer and every commit in the main file.
//     A writer that opens the store after this check writes the main
//     file only when it checkpoints, which changes the file's size or
//     modification time: the returned snapshot is compared with the
//     file when the store is closed (Close, and Merge before it commits),
//     so such a read fails ("changed while it was read") instead of
//     returning a mix of two states. The stat is taken before PATH-wal
//     is looked for, so that no checkpoint falls between the two.
//   - PATH-wal without PATH-shm: no reader can use the WAL without
//     creating PATH-shm. This lasts a moment while a writer opens or
//     closes the store, so it is looked at again for a second, then
//     refused: its commits may be in the WAL alone.
func readOnlyParams(path string) (url.Values, os.FileInfo, error) {
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	for try := 0; ; try++ {
		snap, err := os.Stat(path)
		if err != nil {
			return nil, nil, fmt.Errorf("open store: %w", err)
		}
		wal, shm := exists(path+"-wal"), exists(path+"-shm")
		q := url.Values{}
		q.Set("mode", "ro")
		switch {
		case wal && shm:
			q.Set("_busy_timeout", "60000")
			return q, nil, nil
		case !wal:
			q.Set("immutable", "1")
			return q, snap, nil
		}
		if try == 20 {
			return nil, nil, &InputError{fmt.Errorf("store %s: %s-wal "+
				"exists without %s-shm, and reading it would create that "+
				"file: let the process writing the store finish, or open "+
				"the store for writing once (e.g. resume its sweep)",
				path, path, path)}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unchanged reports an error when the file of a store opened with
// immutable=1 is no longer the one checked at the open.
func unchanged(path string, snap os.FileInfo) error {
	if snap == nil {
		return nil
	}
	now, err := os.Stat(path)
	if err == nil && os.SameFile(now, snap) && now.Size() == snap.Size() &&
		now.ModTime().Equal(snap.ModTime()) {
		return nil
	}
	return fmt.Errorf("store %s changed while it was read (another process "+
		"wrote it); run the command again", path)
}

func (s *Store) init() error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
		return fmt.Errorf("not an stcsim results store? %w", err)
	}
	var v string
	err = tx.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.Exec(`INSERT INTO meta VALUES ('schema', ?)`,
			schemaVersion); err != nil {
			return err
		}
	case err != nil:
		return err
	case v != schemaVersion:
		return fmt.Errorf("store schema version %s, this stcsim reads %s",
			v, schemaVersion)
	}
	return tx.Commit()
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Close closes the store; committed points are on disk.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		if err := s.db.Close(); err != nil {
			return err
		}
		return unchanged(s.path, s.snap)
	}
	if _, err := s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		s.db.Close()
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return s.db.Close()
}

// Done reports whether the unit is already in the store. A stored point
// with the same config and workload name but a different workload content
// or mode list is an error: the store belongs to another sweep.
func (s *Store) Done(u point.Unit, modes []tensorcore.Mode) (bool, error) {
	var wh, ms string
	err := s.db.QueryRow(`SELECT workload_hash, modes FROM points
		WHERE config_hash=? AND workload=?`, u.Point.Hash,
		u.Workload.Name).Scan(&wh, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store %s: %w", s.path, err)
	}
	if err := sameUnit(s.path, u, wh, ms, modes); err != nil {
		return false, &InputError{err}
	}
	return true, nil
}

// CheckStore checks, read-only and before anything runs, that the store
// at path can take the units: the path does not exist yet, or is a file
// Open accepts (an stcsim store, or an empty file or database) holding
// none of the units with other GEMMs or modes. Its errors are bad input
// (ErrNotStore or an InputError).
func CheckStore(path string, units []point.Unit, modes []tensorcore.Mode) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &InputError{fmt.Errorf("store %s: %w", path, err)}
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("store %s: not a regular file: %w", path, ErrNotStore)
	}
	if st.Size() == 0 {
		return nil
	}
	if err := probeStore(path); err != nil {
		return err
	}
	ro, err := OpenReadOnly(path)
	if errors.Is(err, ErrNotStore) {
		return nil // an SQLite database without tables yet (probeStore)
	}
	if err != nil {
		return err
	}
	defer ro.Close()
	for _, u := range units {
		if _, err := ro.Done(u, modes); err != nil {
			return err
		}
	}
	return nil
}

// FieldStore is the store a sweep writes (Open's path), as errors name it
// (package field).
const FieldStore field.Name = "store"

func sameUnit(path string, u point.Unit, wh, ms string, modes []tensorcore.Mode) error {
	if wh != u.Workload.Hash {
		return field.Errorf("store %s already holds workload %s for config %s "+
			"(point %d, %s) with different GEMMs; use another %s", path,
			quote.Q(u.Workload.Name), u.Point.Hash, u.Point.Index+1, u.Point.Label(), FieldStore)
	}
	if want := joinModes(modes); ms != want {
		return field.Errorf("store %s holds workload %s for config %s "+
			"(point %d, %s) in modes %s, this sweep asks for %s; use "+
			"another %s", path, quote.Q(u.Workload.Name), u.Point.Hash,
			u.Point.Index+1, u.Point.Label(), ms, want, FieldStore)
	}
	return nil
}

// joinModes is the text form of a mode list in the store: "dense,sparse".
func joinModes(modes []tensorcore.Mode) string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.String()
	}
	return strings.Join(names, ",")
}

// Commit stores a finished unit, its effective config (YAML) and its
// report in one transaction. It returns false, storing nothing, when
// another writer committed the unit first.
func (s *Store) Commit(u point.Unit, modes []tensorcore.Mode, config []byte, rep *results.Report) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, err := s.commit(u, modes, config, rep)
	if err != nil {
		return false, fmt.Errorf("store %s: commit point %d (%s) workload "+
			"%s: %w", s.path, u.Point.Index+1, u.Point.Label(),
			u.Workload.Name, err)
	}
	return ok, nil
}

func (s *Store) commit(u point.Unit, modes []tensorcore.Mode, config []byte, rep *results.Report) (bool, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	name := u.Workload.Name
	res, err := tx.Exec(`INSERT OR IGNORE INTO points VALUES (?,?,?,?,?,?)`,
		u.Point.Hash, name, u.Workload.Hash, joinModes(modes),
		gridJSON(u.Point.Grid), rep.Version)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO configs VALUES (?,?)`,
		u.Point.Hash, string(config)); err != nil {
		return false, err
	}
	for i, r := range rep.Results {
		if r.Workload != name {
			return false, fmt.Errorf("report holds workload %q, want %q",
				r.Workload, name)
		}
		rec, err := json.Marshal(r)
		if err != nil {
			return false, err
		}
		if _, err := tx.Exec(`INSERT INTO results VALUES (?,?,?,?,?,?,?,?,?,?)`,
			u.Point.Hash, name, r.Layer, r.Mode.String(), i, r.TimeUS, r.TFLOPS,
			r.DRAMGBps, r.Speedup, string(rec)); err != nil {
			return false, fmt.Errorf("layer %s mode %s: %w", r.Layer, r.Mode, err)
		}
	}
	for _, t := range rep.Totals {
		if _, err := tx.Exec(`INSERT INTO totals VALUES (?,?,?,?,?)`,
			u.Point.Hash, t.Workload, t.Mode.String(), t.TimeUS, t.Speedup); err != nil {
			return false, fmt.Errorf("total %s %s: %w", t.Workload, t.Mode, err)
		}
	}
	return true, tx.Commit()
}
