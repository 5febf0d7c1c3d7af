package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

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
