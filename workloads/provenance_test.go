package workloads

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// A tensor with a zero dimension is refused by Prune (the error names
// the source and the shape), as are the other degenerate shapes.
func TestPruneRefusesDegenerateShapes(t *testing.T) {
	p := tensorcore.Pattern{N: 2, M: 4}
	for _, c := range []struct {
		shape []int
		want  string
	}{
		{[]int{0, 32}, "w.npy: shape [0 32] has a zero dimension"},
		{[]int{32, 0}, "w.npy: shape [32 0] has a zero dimension"},
		{[]int{0, 0}, "w.npy: shape [0 0] has a zero dimension"},
		{[]int{8, 0, 3, 3}, "w.npy: shape [8 0 3 3] has a zero dimension"},
		{[]int{0, 4, 1, 1}, "w.npy: shape [0 4 1 1] has a zero dimension"},
		{[]int{32}, "weight of shape [32]: want a 2-D"},
		{[]int{0}, "weight of shape [0]: want a 2-D"},
		{[]int{}, "weight of shape []: want a 2-D"},
		{[]int{4, 6}, "w.npy: K = 6 is not a multiple of 4"},
	} {
		n := 1
		for _, d := range c.shape {
			n *= d
		}
		tt := &Tensor{DType: "<f4", Shape: c.shape, Data: make([]float32, n)}
		for _, verify := range []bool{false, true} {
			_, err := Prune(tt, "w.npy", p, verify)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Prune %v (verify %v): %v, want an error with %q", c.shape, verify, err, c.want)
			}
		}
	}
}

// ReadTensorSHA256 reads what ReadTensor does and hashes the file's bytes.
func TestReadTensorSHA256(t *testing.T) {
	dir := t.TempDir()
	w := SyntheticWeights(8, 16, 3)
	npy, st := writeTensorFiles(t, dir, []int{8, 16}, w.Data)
	for _, c := range []struct{ path, tensor, file string }{
		{npy, "", npy},
		{st, "layer.weight", st},
		{st + "#layer.weight", "", st},
	} {
		want, err := ReadTensor(c.path, c.tensor)
		if err != nil {
			t.Fatal(err)
		}
		got, sum, err := ReadTensorSHA256(c.path, c.tensor)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		b, _ := os.ReadFile(c.file)
		h := sha256.Sum256(b)
		if sum != hex.EncodeToString(h[:]) {
			t.Errorf("%s: sha256 %s, want that of the file's bytes %x", c.path, sum, h)
		}
		if got.Name != want.Name || !equalInts(got.Shape, want.Shape) || len(got.Data) != len(want.Data) {
			t.Errorf("%s: %s %v, want %s %v", c.path, got.Name, got.Shape, want.Name, want.Shape)
		}
	}
	if _, _, err := ReadTensorSHA256(filepath.Join(dir, "none.npy"), ""); err == nil {
		t.Error("a missing file: no error")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// summary.json carries the provenance when set, and a summary without
// it (written before it was recorded) still loads.
func TestPruneSummaryProvenance(t *testing.T) {
	dir := t.TempDir()
	tt := &Tensor{DType: "<f4", Shape: []int{8, 16}, Data: SyntheticWeights(8, 16, 1).Data}
	r, err := Prune(tt, "w.npy", tensorcore.Pattern{N: 2, M: 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	r.Summary.Provenance = &PruneProvenance{Version: "test", Input: "w.npy",
		SHA256: "ab", Pattern: "2:4"}
	out := filepath.Join(dir, "out")
	if err := r.WriteDir(out); err != nil {
		t.Fatal(err)
	}
	js, _ := os.ReadFile(filepath.Join(out, SummaryFile))
	var s PruneSummary
	if err := json.Unmarshal(js, &s); err != nil || s.Provenance == nil ||
		s.Provenance.SHA256 != "ab" || s.Provenance.Input != "w.npy" {
		t.Fatalf("summary.json provenance: %v, %s", err, js)
	}
	if _, err := LoadWeights(out, 8, 16); err != nil {
		t.Fatalf("load with provenance: %v", err)
	}
	var old map[string]any
	json.Unmarshal(js, &old)
	delete(old, "provenance")
	js, _ = json.Marshal(old)
	os.WriteFile(filepath.Join(out, SummaryFile), js, 0o644)
	if _, err := LoadWeights(out, 8, 16); err != nil {
		t.Fatalf("load of a summary without provenance: %v", err)
	}
}

// An exported trace with provenance parses back to the same rows; the
// CSV provenance is one comment line whatever the strings hold.
func TestTraceProvenanceRoundTrip(t *testing.T) {
	tr, err := Build("resnet18", Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := &TraceProvenance{Version: "0", Command: []string{"stcsim", "a\nb\r#c\u2028<&>"},
		Origin: Origin{Name: tr.Name, Source: "model", Batch: 2, Resolution: 224, Precision: "fp16"}}
	for _, format := range []string{"csv", "json"} {
		var b bytes.Buffer
		parse := ParseCSV
		if format == "csv" {
			err = tr.WriteCSVProvenance(&b, p)
		} else {
			err, parse = tr.WriteJSONProvenance(&b, p), ParseJSON
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := parse(bytes.NewReader(b.Bytes()), "t")
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b.String())
		}
		if len(got.GEMMs) != len(tr.GEMMs) || got.MACs() != tr.MACs() {
			t.Errorf("%s: %d rows, want %d", format, len(got.GEMMs), len(tr.GEMMs))
		}
		var back struct {
			Provenance *TraceProvenance `json:"provenance"`
		}
		raw := b.Bytes()
		if format == "csv" {
			lines := strings.Split(b.String(), "\n")
			rest, ok := strings.CutPrefix(lines[1], "# provenance: ")
			if !ok || lines[0] != "# stcsim trace resnet18" || !strings.HasPrefix(lines[2], "name,") {
				t.Fatalf("csv head: %q", lines[:3])
			}
			raw = []byte(`{"provenance":` + rest + "}")
		}
		if err := json.Unmarshal(raw, &back); err != nil || back.Provenance == nil ||
			strings.Join(back.Provenance.Command, " ") != strings.Join(p.Command, " ") {
			t.Errorf("%s: provenance does not read back: %v %+v", format, err, back.Provenance)
		}
	}
	for _, bad := range []string{`"x"`, `[]`, `1`, `null`} {
		js := `{"name": "t", "provenance": ` + bad + `, "gemms": [{"name": "a", "m": 8, "n": 8, "k": 8, ` +
			`"precision": "fp16", "sparsity": "dense", "count": 1, "batch": 1}]}`
		if _, err := ParseJSON(strings.NewReader(js), "t.json"); err == nil ||
			!strings.Contains(err.Error(), "provenance") {
			t.Errorf("provenance %s: %v, want an error at provenance", bad, err)
		}
	}
}
