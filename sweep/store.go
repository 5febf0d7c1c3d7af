package sweep

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"github.com/stcsim/stcsim/sim"

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
func Open(path string) (*Store, error) {
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

// probeStore checks, read-only, that an existing file is an stcsim store
// or an SQLite database without tables (a store another writer is
// creating right now).
func probeStore(path string) error {
	ro, err := OpenReadOnly(path)
	if err == nil {
		return ro.db.Close()
	}
	if !errors.Is(err, ErrNotStore) {
		return err
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "60000")
	db, oerr := sql.Open("sqlite3", dsn(path, q))
	if oerr != nil {
		return err
	}
	defer db.Close()
	var n int
	if db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n) == nil && n == 0 {
		return nil
	}
	return err
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
// ErrNotStore, and nothing is created or converted.
func OpenReadOnly(path string) (*Store, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return nil, fmt.Errorf("store %s: %w", path, ErrNotStore)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "60000")
	db, err := sql.Open("sqlite3", dsn(path, q))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{path: path, db: db, readOnly: true}
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
		return s.db.Close()
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
func (s *Store) Done(u Unit, modes []tensorcore.Mode) (bool, error) {
	var wh, ms string
	err := s.db.QueryRow(`SELECT workload_hash, modes FROM points
		WHERE config_hash=? AND workload=?`, u.Point.Hash,
		u.Workload.Trace.Name).Scan(&wh, &ms)
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
func CheckStore(path string, units []Unit, modes []tensorcore.Mode) error {
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

func sameUnit(path string, u Unit, wh, ms string, modes []tensorcore.Mode) error {
	if wh != u.Workload.Hash {
		return fmt.Errorf("store %s already holds workload %q for config %s "+
			"(point %d, %s) with different GEMMs; use another --db", path,
			u.Workload.Trace.Name, u.Point.Hash, u.Point.Index+1, u.Point.Label())
	}
	if want := joinModes(modes); ms != want {
		return fmt.Errorf("store %s holds workload %q for config %s "+
			"(point %d, %s) in modes %s, this sweep asks for %s; use "+
			"another --db", path, u.Workload.Trace.Name, u.Point.Hash,
			u.Point.Index+1, u.Point.Label(), ms, want)
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
func (s *Store) Commit(u Unit, modes []tensorcore.Mode, config []byte, rep *sim.Report) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, err := s.commit(u, modes, config, rep)
	if err != nil {
		return false, fmt.Errorf("store %s: commit point %d (%s) workload "+
			"%s: %w", s.path, u.Point.Index+1, u.Point.Label(),
			u.Workload.Trace.Name, err)
	}
	return ok, nil
}

func (s *Store) commit(u Unit, modes []tensorcore.Mode, config []byte, rep *sim.Report) (bool, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	name := u.Workload.Trace.Name
	res, err := tx.Exec(`INSERT OR IGNORE INTO points VALUES (?,?,?,?,?,?)`,
		u.Point.Hash, name, u.Workload.Hash, joinModes(modes),
		u.Point.gridJSON(), rep.Version)
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

// Merge copies every point of the stores at paths into s. Everything is
// checked before anything is written: each input is opened read-only and
// checked (integrity, every point complete, every record readable), and a
// point held by two stores (inputs or s) with different GEMMs, modes or
// results is an error. Then each input is merged in one transaction;
// points already in s are kept.
func (s *Store) Merge(paths ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, err := s.digests()
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	from := map[pointKey]string{}
	for k := range seen {
		from[k] = s.path
	}
	for _, p := range paths {
		if err := checkInput(p, seen, from); err != nil {
			return &InputError{fmt.Errorf("merge: %w", err)}
		}
	}
	for _, p := range paths {
		if err := s.mergeOne(p); err != nil {
			return fmt.Errorf("merge %s into %s: %w", p, s.path, err)
		}
	}
	return nil
}

// CheckInputs checks merge inputs without writing anything: each is an
// stcsim store, undamaged, and no two hold one point with different
// content. Merge checks the same (and the output) again.
func CheckInputs(paths ...string) error {
	seen, from := map[pointKey]string{}, map[pointKey]string{}
	for _, p := range paths {
		if err := checkInput(p, seen, from); err != nil {
			return &InputError{fmt.Errorf("merge: %w", err)}
		}
	}
	return nil
}

// checkInput checks one merge input and its points against those seen.
func checkInput(path string, seen map[pointKey]string, from map[pointKey]string) error {
	in, err := OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := in.Check(); err != nil {
		return err
	}
	d, err := in.digests()
	if err != nil {
		return err
	}
	for k, v := range d {
		if prev, ok := seen[k]; ok && prev != v {
			return fmt.Errorf("%s and %s both hold workload %s for config "+
				"%s, with different GEMMs, modes or results", from[k], path,
				k.workload, k.config)
		}
		seen[k], from[k] = v, path
	}
	return nil
}

// pointKey identifies a point of a store.
type pointKey struct{ config, workload string }

// digests fingerprints every point's content: workload hash, modes,
// result records and totals.
func (s *Store) digests() (map[pointKey]string, error) {
	out := map[pointKey]string{}
	rows, err := s.db.Query(`SELECT p.config_hash, p.workload,
		p.workload_hash, p.modes,
		(SELECT group_concat(r.layer || char(31) || r.mode || char(31) || r.record, char(30))
		 FROM (SELECT * FROM results r WHERE r.config_hash=p.config_hash
		       AND r.workload=p.workload ORDER BY r.seq, r.mode) r),
		(SELECT group_concat(t.mode || char(31) || t.time_us || char(31) || t.speedup, char(30))
		 FROM (SELECT * FROM totals t WHERE t.config_hash=p.config_hash
		       AND t.workload=p.workload ORDER BY t.mode) t)
		FROM points p`)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k pointKey
		var wh, modes string
		var res, tot sql.NullString
		if err := rows.Scan(&k.config, &k.workload, &wh, &modes, &res, &tot); err != nil {
			return nil, fmt.Errorf("store %s: %w", s.path, err)
		}
		sum := sha256.Sum256([]byte(wh + "\x1e" + modes + "\x1e" + res.String +
			"\x1d" + tot.String))
		out[k] = hex.EncodeToString(sum[:])
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store %s: %w", s.path, err)
	}
	return out, nil
}

func (s *Store) mergeOne(path string) error {
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	q := url.Values{}
	q.Set("mode", "ro")
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS src`,
		dsn(path, q)); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, `DETACH DATABASE src`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var clash string
	err = tx.QueryRow(`SELECT p.workload || ' config ' || p.config_hash
		FROM src.points p JOIN main.points m USING (config_hash, workload)
		WHERE p.workload_hash != m.workload_hash OR p.modes != m.modes
		LIMIT 1`).Scan(&clash)
	if err == nil {
		return fmt.Errorf("both stores hold workload %s with different "+
			"GEMMs or modes", clash)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for _, q := range []string{
		`INSERT OR IGNORE INTO main.configs SELECT * FROM src.configs`,
		`INSERT OR IGNORE INTO main.results SELECT * FROM src.results r
			WHERE NOT EXISTS (SELECT 1 FROM main.points m
			WHERE m.config_hash=r.config_hash AND m.workload=r.workload)`,
		`INSERT OR IGNORE INTO main.totals SELECT * FROM src.totals t
			WHERE NOT EXISTS (SELECT 1 FROM main.points m
			WHERE m.config_hash=t.config_hash AND m.workload=t.workload)`,
		`INSERT OR IGNORE INTO main.points SELECT * FROM src.points`,
	} {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Check runs SQLite's integrity check and verifies that every point has
// its results.
func (s *Store) Check() error {
	var res string
	if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	if res != "ok" {
		return fmt.Errorf("store %s: integrity check: %s", s.path, res)
	}
	var orphan string
	err := s.db.QueryRow(`SELECT workload || ' config ' || config_hash
		FROM points p WHERE NOT EXISTS (SELECT 1 FROM results r
		WHERE r.config_hash=p.config_hash AND r.workload=p.workload)
		LIMIT 1`).Scan(&orphan)
	if err == nil {
		return fmt.Errorf("store %s: point %s has no results", s.path, orphan)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	return s.checkRecords()
}

// checkRecords decodes every result record and grid, so that a store
// that was edited or damaged is found before it is exported or merged.
func (s *Store) checkRecords() error {
	rows, err := s.db.Query(`SELECT r.config_hash, r.workload, r.layer,
		r.mode, r.record, p.grid FROM results r JOIN points p
		USING (config_hash, workload)`)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var hash, w, layer, mode, rec, grid string
		if err := rows.Scan(&hash, &w, &layer, &mode, &rec, &grid); err != nil {
			return fmt.Errorf("store %s: %w", s.path, err)
		}
		var r sim.LayerResult
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			return fmt.Errorf("store %s: workload %s config %s layer %s "+
				"mode %s: unreadable result record: %v", s.path, w, hash,
				layer, mode, err)
		}
		if r.Workload != w || r.Layer != layer || r.Mode.String() != mode {
			return fmt.Errorf("store %s: workload %s config %s layer %s "+
				"mode %s: the result record is of %s %s %s", s.path, w,
				hash, layer, mode, r.Workload, r.Layer, r.Mode)
		}
		if _, err := parseGrid(grid); err != nil {
			return fmt.Errorf("store %s: workload %s config %s: %v", s.path,
				w, hash, err)
		}
	}
	return rows.Err()
}
