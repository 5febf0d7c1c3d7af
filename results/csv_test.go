package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

func mustJSON(t *testing.T, rep *Report) []byte {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// filled sets every field of v (a struct, through pointers) to a
// non-zero value, so that no omitempty key is left out of its JSON.
func filled(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				filled(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		filled(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		filled(v.Index(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}

// jsonOnly are the record's JSON keys the CSV leaves out: a list and an
// object of their own.
var jsonOnly = map[string]bool{"candidates": true, "straggler": true}

// The CSV has a column for every JSON key of a record (nested objects
// flattened), found from a record with every field set, so a field added
// to LayerResult without a column fails here.
func TestCSVColumnsMatchJSONKeys(t *testing.T) {
	var full LayerResult
	filled(reflect.ValueOf(&full).Elem())
	full.Precision, full.Mode = tensorcore.FP16, tensorcore.Sparse
	rep := &Report{Results: []LayerResult{full}}
	var doc struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(mustJSON(t, rep), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range doc.Results[0] {
		if jsonOnly[k] {
			continue
		}
		if m, ok := v.(map[string]any); ok {
			for sub := range m {
				keys = append(keys, k+"_"+sub)
			}
			continue
		}
		keys = append(keys, k)
	}
	cols := append([]string(nil), Columns...)
	sort.Strings(keys)
	sort.Strings(cols)
	if strings.Join(keys, ",") != strings.Join(cols, ",") {
		t.Fatalf("JSON keys %v\nCSV columns %v", keys, cols)
	}
	rows, err := csv.NewReader(bytes.NewReader(CSV(rep))).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[1]) != len(Columns) {
		t.Fatalf("CSV: %v %v", rows, err)
	}
	// Every filled field renders: no column of the full record is empty.
	for k, v := range rows[1] {
		if v == "" {
			t.Errorf("column %s is empty for a record with every field set", Columns[k])
		}
	}
}

// Text that a spreadsheet would run as a formula is neutralised; numbers
// are not (issue 13 item 18).
func TestCSVNeutralisesFormulas(t *testing.T) {
	rep := &Report{Results: []LayerResult{{Workload: "w", Layer: "l", Note: "n"}}}
	rep.Results[0].Layer = "=HYPERLINK(\"http://x\")"
	rep.Results[0].Workload = "@SUM(A1)"
	rep.Results[0].Note = "-1.5"
	recs, err := csv.NewReader(strings.NewReader(string(CSV(rep)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	row := recs[1]
	if row[0] != "'@SUM(A1)" || row[1] != "'=HYPERLINK(\"http://x\")" {
		t.Errorf("workload %q layer %q not neutralised", row[0], row[1])
	}
	note := 0
	for i, c := range recs[0] {
		if c == "note" {
			note = i
		}
	}
	if got := row[note]; got != "-1.5" {
		t.Errorf("a number %q was changed", got)
	}
	for _, s := range []string{"+1+1", "\tcmd", "\rcmd", "-cmd"} {
		if CSVText(s) != "'"+s {
			t.Errorf("CSVText(%q) = %q", s, CSVText(s))
		}
	}
}

// A record whose derived fields agree passes CheckDerived; changing any
// one of them alone (a hand edit) fails it, naming the field.
func TestCheckDerivedFindsAnEditedField(t *testing.T) {
	good := func() LayerResult {
		r := LayerResult{M: 256, N: 512, K: 1024, Batch: 1, Cycles: 141000,
			DRAMReadBytes: 1 << 20, DRAMWriteBytes: 1 << 18}
		r.ClockMHz = 1410
		sec := float64(r.Cycles) / 1410e6
		r.TimeUS, r.TFLOPS = sec*1e6, r.FLOPs()/sec/1e12
		r.DRAMGBps = float64(r.DRAMReadBytes+r.DRAMWriteBytes) / sec / 1e9
		return r
	}
	if err := good().CheckDerived(); err != nil {
		t.Fatalf("a consistent record: %v", err)
	}
	for name, edit := range map[string]func(*LayerResult){
		"time_us":   func(r *LayerResult) { r.TimeUS *= 1.01 },
		"tflops":    func(r *LayerResult) { r.TFLOPS *= 2 },
		"dram_gbps": func(r *LayerResult) { r.DRAMGBps += 1e-6 },
		"cycles":    func(r *LayerResult) { r.Cycles = 0 },
		"clock":     func(r *LayerResult) { r.ClockMHz = -1 },
		"energy":    func(r *LayerResult) { r.EnergyUJ = -3 },
	} {
		r := good()
		edit(&r)
		err := r.CheckDerived()
		if err == nil {
			t.Errorf("%s edited: passed", name)
			continue
		}
		if want := map[string]string{"time_us": "time_us", "tflops": "tflops", "dram_gbps": "dram_gbps",
			"cycles": "cycles", "clock": "clock", "energy": "energy"}[name]; !strings.Contains(err.Error(), want) {
			t.Errorf("%s edited: %q does not name it", name, err)
		}
	}
}
