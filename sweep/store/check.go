package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
)

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
		if err := r.CheckDerived(); err != nil {
			return fmt.Errorf("%s: the result record does not agree with itself (%v): "+
				"a record no simulation made, edited by hand or corrupted", where(), err)
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
