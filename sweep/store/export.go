package store

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
)

// Row is one stored result: a layer of a workload in one mode at one
// point.
type Row struct {
	ConfigHash  string
	ToolVersion string
	Grid        []point.Assignment
	seq         int
	results.LayerResult
}

// TotalRow is one workload's total in one mode at one point.
type TotalRow struct {
	ConfigHash string
	Grid       []point.Assignment
	results.Total
}

// Rows reads every result, in a stable order: by grid values (numbers
// compared as numbers), config hash, workload, then the report's order.
func (s *Store) Rows() ([]Row, error) {
	rs, err := s.db.Query(`SELECT r.config_hash, p.tool_version, p.grid,
		r.seq, r.record FROM results r JOIN points p
		USING (config_hash, workload)`)
	if err != nil {
		return nil, fmt.Errorf("store %s: read results: %w", s.path, err)
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		var r Row
		var grid, rec string
		if err := rs.Scan(&r.ConfigHash, &r.ToolVersion, &grid, &r.seq,
			&rec); err != nil {
			return nil, fmt.Errorf("store %s: read results: %w", s.path, err)
		}
		if err := json.Unmarshal([]byte(rec), &r.LayerResult); err != nil {
			return nil, fmt.Errorf("store %s: result record: %w", s.path, err)
		}
		if r.Grid, err = parseGrid(grid); err != nil {
			return nil, fmt.Errorf("store %s: %w", s.path, err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store %s: read results: %w", s.path, err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := comparePoint(a.Grid, b.Grid, a.ConfigHash, b.ConfigHash,
			a.Workload, b.Workload); c != 0 {
			return c < 0
		}
		return a.seq < b.seq
	})
	return out, nil
}

// Totals reads every workload total, in the order of Rows.
func (s *Store) Totals() ([]TotalRow, error) {
	rs, err := s.db.Query(`SELECT t.config_hash, p.grid, t.workload,
		t.mode, t.time_us, t.speedup FROM totals t JOIN points p
		USING (config_hash, workload)`)
	if err != nil {
		return nil, fmt.Errorf("store %s: read totals: %w", s.path, err)
	}
	defer rs.Close()
	var out []TotalRow
	for rs.Next() {
		var t TotalRow
		var grid, mode string
		if err := rs.Scan(&t.ConfigHash, &grid, &t.Workload, &mode,
			&t.TimeUS, &t.Speedup); err != nil {
			return nil, fmt.Errorf("store %s: read totals: %w", s.path, err)
		}
		if t.Mode, err = tensorcore.ParseMode(mode); err != nil {
			return nil, fmt.Errorf("store %s: total of %s: %w", s.path, t.Workload, err)
		}
		if t.Grid, err = parseGrid(grid); err != nil {
			return nil, fmt.Errorf("store %s: %w", s.path, err)
		}
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store %s: read totals: %w", s.path, err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := comparePoint(a.Grid, b.Grid, a.ConfigHash, b.ConfigHash,
			a.Workload, b.Workload); c != 0 {
			return c < 0
		}
		return a.Mode < b.Mode
	})
	return out, nil
}

// comparePoint orders results by grid values, then config hash, then
// workload (the stable order of exports).
func comparePoint(ga, gb []point.Assignment, ha, hb, wa, wb string) int {
	if c := compareGrid(ga, gb); c != 0 {
		return c
	}
	if c := strings.Compare(ha, hb); c != 0 {
		return c
	}
	return strings.Compare(wa, wb)
}

// gridJSON is the grid values as stored: a JSON list of [key, value]
// pairs, in axis order (parseGrid reads it back).
func gridJSON(grid []point.Assignment) string {
	pairs := make([][2]string, len(grid))
	for i, a := range grid {
		pairs[i] = [2]string{a.Key, a.Value}
	}
	b, _ := json.Marshal(pairs)
	return string(b)
}

func parseGrid(s string) ([]point.Assignment, error) {
	var pairs [][2]string
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		return nil, fmt.Errorf("grid values %q: %w", s, err)
	}
	out := make([]point.Assignment, len(pairs))
	for i, p := range pairs {
		out[i] = point.Assignment{Key: p[0], Value: p[1]}
	}
	return out, nil
}

// compareGrid orders points by their grid values key by key; values that
// are both numbers compare as numbers.
func compareGrid(a, b []point.Assignment) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].Key != b[i].Key {
			return compareStrings(a[i].Key, b[i].Key)
		}
		if c := CompareValues(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// CompareValues orders two grid values: numerically when both are
// numbers, otherwise as text.
func CompareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return compareStrings(a, b)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gridKeys is the sorted union of the rows' grid keys.
func gridKeys(rows []Row) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range rows {
		for _, a := range r.Grid {
			if !seen[a.Key] {
				seen[a.Key] = true
				keys = append(keys, a.Key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// ExportCSV renders rows as CSV: config hash, tool version, one column per
// grid key, then the columns of stcsim run's results.csv.
func ExportCSV(rows []Row) []byte {
	keys := gridKeys(rows)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := append([]string{"config_hash", "tool_version"}, keys...)
	_ = w.Write(append(header, results.Columns...))
	for _, r := range rows {
		rec := []string{r.ConfigHash, r.ToolVersion}
		for _, k := range keys {
			v, _ := point.GridValue(r.Grid, k)
			rec = append(rec, results.CSVText(v))
		}
		_ = w.Write(append(rec, results.Row(r.LayerResult)...))
	}
	w.Flush()
	return buf.Bytes()
}

// exportRecord is one row of the JSON export.
type exportRecord struct {
	ConfigHash  string            `json:"config_hash"`
	ToolVersion string            `json:"tool_version"`
	Grid        map[string]string `json:"grid"`
	results.LayerResult
}

// ExportJSON renders rows as a JSON array, one object per row with its
// grid values and result record.
func ExportJSON(rows []Row) []byte {
	recs := make([]exportRecord, len(rows))
	for i, r := range rows {
		g := make(map[string]string, len(r.Grid))
		for _, a := range r.Grid {
			g[a.Key] = a.Value
		}
		recs[i] = exportRecord{r.ConfigHash, r.ToolVersion, g, r.LayerResult}
	}
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal export: %v", err)) // plain data cannot fail
	}
	return append(b, '\n')
}
