package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

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

func sameUnit(path string, u point.Unit, wh, ms string, modes []tensorcore.Mode) error {
	if wh != u.Workload.Hash {
		return fmt.Errorf("store %s already holds workload %s for config %s "+
			"(point %d, %s) with different GEMMs; use another --db", path,
			quote.Q(u.Workload.Name), u.Point.Hash, u.Point.Index+1, u.Point.Label())
	}
	if want := joinModes(modes); ms != want {
		return fmt.Errorf("store %s holds workload %s for config %s "+
			"(point %d, %s) in modes %s, this sweep asks for %s; use "+
			"another --db", path, quote.Q(u.Workload.Name), u.Point.Hash,
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

// Merge copies every point of the stores at paths into s. Everything is
// checked before anything is written: s and each input are checked
// (Check: integrity, consistency of the tables, every record readable;
// inputs opened read-only), an input that is s (os.SameFile) is an
// error, and a point held by two stores (inputs or s) with different
// GEMMs, modes or results is an error. Then each input is merged in one
// transaction; points already in s are kept, so an input given twice
// adds nothing the second time (CheckInputs, which the merge command
// runs first, refuses that as a mistake).
func (s *Store) Merge(paths ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := notOutput(s.path, paths); err != nil {
		return &InputError{fmt.Errorf("merge: %w", err)}
	}
	if err := s.Check(); err != nil {
		return &InputError{fmt.Errorf("merge: output %w", err)}
	}
	seen, err := s.digests()
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	from := map[pointKey]string{}
	for k := range seen {
		from[k] = s.path
	}
	snaps := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		if snaps[i], err = checkInput(p, seen, from); err != nil {
			return &InputError{fmt.Errorf("merge: %w", err)}
		}
	}
	for i, p := range paths {
		if err := s.mergeOne(p, snaps[i]); err != nil {
			return fmt.Errorf("merge %s into %s: %w", p, s.path, err)
		}
	}
	return nil
}

// CheckInputs checks merge inputs without writing anything: no two are
// one file, each is an stcsim store, undamaged, and no two hold one point
// with different content. Merge checks the same (and the output) again.
func CheckInputs(paths ...string) error {
	if err := distinctInputs(paths); err != nil {
		return &InputError{fmt.Errorf("merge: %w", err)}
	}
	seen, from := map[pointKey]string{}, map[pointKey]string{}
	for _, p := range paths {
		if _, err := checkInput(p, seen, from); err != nil {
			return &InputError{fmt.Errorf("merge: %w", err)}
		}
	}
	return nil
}

// distinctInputs refuses an input given twice: another spelling, a
// symbolic or hard link (os.SameFile). Paths that cannot be read are
// left to the open.
func distinctInputs(paths []string) error {
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		infos[i], _ = os.Stat(p)
		for j := 0; j < i; j++ {
			if infos[i] != nil && infos[j] != nil && os.SameFile(infos[i], infos[j]) {
				return fmt.Errorf("inputs %s and %s are the same store "+
					"(given twice)", paths[j], p)
			}
		}
	}
	return nil
}

// notOutput refuses an input that is the output store out.
func notOutput(out string, paths []string) error {
	o, err := os.Stat(out)
	if err != nil {
		return nil
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && os.SameFile(o, st) {
			return fmt.Errorf("input %s is the output store %s", p, out)
		}
	}
	return nil
}

// checkInput checks one merge input and its points against those seen.
// It returns the input's snapshot when it was read with immutable=1
// (readOnlyParams), for mergeOne to copy the very file it checked.
func checkInput(path string, seen map[pointKey]string, from map[pointKey]string) (os.FileInfo, error) {
	in, err := OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	snap := in.snap
	err = in.Check()
	var d map[pointKey]string
	if err == nil {
		d, err = in.digests()
	}
	if cerr := in.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	for k, v := range d {
		if prev, ok := seen[k]; ok && prev != v {
			return nil, fmt.Errorf("%s and %s both hold workload %s for config "+
				"%s, with different GEMMs, modes or results", from[k], path,
				k.workload, k.config)
		}
		seen[k], from[k] = v, path
	}
	return snap, nil
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

// mergeOne copies the input at path, attached read-only as checkInput
// read it (readOnlyParams: nothing is created beside it). snap is the
// input's file when checkInput read it with immutable=1: the file copied
// must be that one, unchanged until the copy commits.
func (s *Store) mergeOne(path string, snap os.FileInfo) error {
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	q, now, err := readOnlyParams(path)
	if err != nil {
		return err
	}
	switch {
	case snap != nil && now == nil: // a writer opened it since the check
		return fmt.Errorf("store %s changed while it was read (another "+
			"process opened it for writing); run the command again", path)
	case snap != nil:
		if err := unchanged(path, snap); err != nil {
			return err
		}
	default:
		snap = now
	}
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
	if err := unchanged(path, snap); err != nil {
		return err
	}
	return tx.Commit()
}

// Check verifies a store before it is exported, plotted or merged, and
// a merge's result. Besides SQLite's integrity check it reads each table
// once and requires:
//
//   - points: readable modes and grid values;
//   - configs: every point's config present, and each config's YAML
//     hashing to its config_hash (the first 16 hex digits of its SHA-256);
//   - results: every row of a point, in one of the point's modes, with a
//     readable record whose workload, layer and mode are the row's and
//     whose time_us, tflops, dram_gbps and speedup equal the row's
//     columns (those are copies of the record, exactly, as stored);
//   - totals: every row of a point, in one of its modes; a point's sparse
//     speedup is its dense time_us over its sparse time_us (within a
//     relative 1e-9), a dense speedup 0. (time_us is not compared with
//     the sum of the records: the totals are stored as the simulator
//     reported them.)
//   - every point has results in each of its modes, the same layers in
//     each, and a total per mode.
//
// The first violation is an error naming the store, the table and the
// point.
func (s *Store) Check() error {
	var res string
	if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	if res != "ok" {
		return fmt.Errorf("store %s: integrity check: %s", s.path, res)
	}
	pts, order, err := s.checkPoints()
	if err == nil {
		err = s.checkConfigs(pts)
	}
	if err == nil {
		err = s.checkResults(pts)
	}
	if err == nil {
		err = s.checkTotals(pts)
	}
	if err != nil {
		return err
	}
	for _, k := range order {
		if err := pts[k].complete(); err != nil {
			return fmt.Errorf("store %s: point %s: %v", s.path, pts[k].label(k), err)
		}
	}
	return nil
}

// pointCheck is what Check gathers about a point from each table.
type pointCheck struct {
	grid      []point.Assignment
	modes     []tensorcore.Mode
	hasConfig bool
	perMode   map[tensorcore.Mode]*modeCheck
}

// modeCheck is a point's results in one mode: how many layers, a sum of
// their names' hashes (to compare the layer sets of two modes), and its
// row in table totals, if any.
type modeCheck struct {
	layers   int
	layerSum uint64
	total    bool
	timeUS   float64 // of the total
	speedup  float64 // of the total
}

func (p *pointCheck) label(k pointKey) string {
	return fmt.Sprintf("(workload %s, config %s, %s)", k.workload, k.config,
		point.Point{Grid: p.grid}.Label())
}

// mode is the point's accumulator of a mode, nil when the point is not
// in that mode.
func (p *pointCheck) mode(m tensorcore.Mode) *modeCheck {
	return p.perMode[m]
}

func (p *pointCheck) complete() error {
	if !p.hasConfig {
		return fmt.Errorf("its config is missing from table configs")
	}
	first := p.perMode[p.modes[0]]
	for _, m := range p.modes {
		mc := p.perMode[m]
		switch {
		case mc.layers == 0:
			return fmt.Errorf("has no results (table results) in mode %s", m)
		case !mc.total:
			return fmt.Errorf("has no total (table totals) in mode %s", m)
		case mc.layers != first.layers || mc.layerSum != first.layerSum:
			return fmt.Errorf("table results holds other layers in mode %s "+
				"than in mode %s", m, p.modes[0])
		}
	}
	for _, m := range p.modes {
		want := 0.0
		if d := p.perMode[tensorcore.Dense]; d != nil && m == tensorcore.Sparse {
			want = d.timeUS / p.perMode[m].timeUS
		}
		if got := p.perMode[m].speedup; !near(got, want) {
			return fmt.Errorf("table totals: mode %s: speedup is %v, its "+
				"time_us give %v", m, got, want)
		}
	}
	return nil
}

func (s *Store) checkPoints() (map[pointKey]*pointCheck, []pointKey, error) {
	rows, err := s.db.Query(`SELECT config_hash, workload, modes, grid
		FROM points ORDER BY config_hash, workload`)
	if err != nil {
		return nil, nil, fmt.Errorf("store %s: table points: %w", s.path, err)
	}
	defer rows.Close()
	pts := map[pointKey]*pointCheck{}
	var order []pointKey
	for rows.Next() {
		var k pointKey
		var modes, grid string
		if err := rows.Scan(&k.config, &k.workload, &modes, &grid); err != nil {
			return nil, nil, fmt.Errorf("store %s: table points: %w", s.path, err)
		}
		p := &pointCheck{perMode: map[tensorcore.Mode]*modeCheck{}}
		p.grid, err = parseGrid(grid)
		if err == nil {
			err = checkGridText(grid, p.grid)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("store %s: table points: point "+
				"(workload %s, config %s): %v", s.path, k.workload, k.config, err)
		}
		for _, name := range strings.Split(modes, ",") {
			m, err := tensorcore.ParseMode(name)
			if err == nil && p.perMode[m] != nil {
				err = fmt.Errorf("mode %s twice", m)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("store %s: table points: point "+
					"%s: modes %q: %v", s.path, p.label(k), modes, err)
			}
			p.modes = append(p.modes, m)
			p.perMode[m] = &modeCheck{}
		}
		pts[k] = p
		order = append(order, k)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("store %s: table points: %w", s.path, err)
	}
	return pts, order, nil
}

func (s *Store) checkConfigs(pts map[pointKey]*pointCheck) error {
	rows, err := s.db.Query(`SELECT config_hash, config_yaml FROM configs`)
	if err != nil {
		return fmt.Errorf("store %s: table configs: %w", s.path, err)
	}
	defer rows.Close()
	byConfig := map[string][]pointKey{}
	for k := range pts {
		byConfig[k.config] = append(byConfig[k.config], k)
	}
	for _, ks := range byConfig { // the first bad point named is always the same
		slices.SortFunc(ks, func(a, b pointKey) int { return strings.Compare(a.workload, b.workload) })
	}
	have := map[string]bool{}
	for rows.Next() {
		var hash, body string
		if err := rows.Scan(&hash, &body); err != nil {
			return fmt.Errorf("store %s: table configs: %w", s.path, err)
		}
		sum := sha256.Sum256([]byte(body))
		if got := hex.EncodeToString(sum[:8]); got != hash {
			return fmt.Errorf("store %s: table configs: config %s: its YAML "+
				"hashes to %s (edited or damaged)", s.path, hash, got)
		}
		have[hash] = true
		for _, k := range byConfig[hash] {
			p := pts[k]
			if err := gridAgrees([]byte(body), p.grid); err != nil {
				return fmt.Errorf("store %s: table points: point %s: %v", s.path, p.label(k), err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store %s: table configs: %w", s.path, err)
	}
	for k, p := range pts {
		p.hasConfig = have[k.config]
	}
	return nil
}

// checkResults decodes every result record and compares it with its row.
func (s *Store) checkResults(pts map[pointKey]*pointCheck) error {
	rows, err := s.db.Query(`SELECT config_hash, workload, layer, mode,
		time_us, tflops, dram_gbps, speedup, record FROM results`)
	if err != nil {
		return fmt.Errorf("store %s: table results: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k pointKey
		var layer, mode, rec string
		var col [4]float64
		if err := rows.Scan(&k.config, &k.workload, &layer, &mode, &col[0],
			&col[1], &col[2], &col[3], &rec); err != nil {
			return fmt.Errorf("store %s: table results: %w", s.path, err)
		}
		p := pts[k]
		if p == nil {
			return fmt.Errorf("store %s: table results: layer %s mode %s "+
				"of workload %s config %s: no such point in table points",
				s.path, layer, mode, k.workload, k.config)
		}
		where := func() string {
			return fmt.Sprintf("store %s: table results: point %s layer %s "+
				"mode %s", s.path, p.label(k), layer, mode)
		}
		var r results.LayerResult
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			return fmt.Errorf("%s: unreadable result record: %v", where(), err)
		}
		if r.Workload != k.workload || r.Layer != layer || r.Mode.String() != mode {
			return fmt.Errorf("%s: the result record is of %s %s %s", where(),
				r.Workload, r.Layer, r.Mode)
		}
		mc := p.mode(r.Mode)
		if mc == nil {
			return fmt.Errorf("%s: the point is not in mode %s", where(), mode)
		}
		for i, v := range [4]float64{r.TimeUS, r.TFLOPS, r.DRAMGBps, r.Speedup} {
			if col[i] != v {
				return fmt.Errorf("%s: column %s is %v, its record says %v",
					where(), derivedColumns[i], col[i], v)
			}
		}
		mc.layers++
		h := fnv.New64a()
		h.Write([]byte(layer))
		mc.layerSum += h.Sum64()
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store %s: table results: %w", s.path, err)
	}
	return nil
}

// derivedColumns are the results columns copied from the record.
var derivedColumns = [4]string{"time_us", "tflops", "dram_gbps", "speedup"}

// checkTotals reads every total into its point's check.
func (s *Store) checkTotals(pts map[pointKey]*pointCheck) error {
	rows, err := s.db.Query(`SELECT config_hash, workload, mode, time_us,
		speedup FROM totals`)
	if err != nil {
		return fmt.Errorf("store %s: table totals: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k pointKey
		var mode string
		var t, sp float64
		if err := rows.Scan(&k.config, &k.workload, &mode, &t, &sp); err != nil {
			return fmt.Errorf("store %s: table totals: %w", s.path, err)
		}
		p := pts[k]
		if p == nil {
			return fmt.Errorf("store %s: table totals: mode %s of workload %s "+
				"config %s: no such point in table points", s.path, mode,
				k.workload, k.config)
		}
		where := fmt.Sprintf("store %s: table totals: point %s mode %s",
			s.path, p.label(k), mode)
		m, err := tensorcore.ParseMode(mode)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		mc := p.mode(m)
		if mc == nil {
			return fmt.Errorf("%s: the point is not in mode %s", where, m)
		}
		mc.total, mc.timeUS, mc.speedup = true, t, sp
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store %s: table totals: %w", s.path, err)
	}
	return nil
}

// near compares two quotients of the same numbers, computed apart.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
