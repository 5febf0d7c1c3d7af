package workloads

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// writeTensorFiles writes w (M x K, 2-D) as .npy and as a safetensors
// tensor "layer.weight" next to a second tensor.
func writeTensorFiles(t *testing.T, dir string, shape []int, data []float32) (npy, st string) {
	t.Helper()
	npy = filepath.Join(dir, "w.npy")
	var b bytes.Buffer
	if err := tensorfile.WriteNPY(&b, shape, data); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(npy, b.Bytes(), 0o644)
	st = filepath.Join(dir, "m.safetensors")
	b.Reset()
	if err := tensorfile.WriteSafetensors(&b, []Tensor{{Name: "other", Shape: []int{1}, Data: []float32{9}},
		{Name: "layer.weight", Shape: shape, Data: data}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(st, b.Bytes(), 0o644)
	return npy, st
}

func TestPruneAndLoad(t *testing.T) {
	dir := t.TempDir()
	const m, k = 8, 16
	w := SyntheticWeights(m, k, 7)
	npy, st := writeTensorFiles(t, dir, []int{m, k}, w.Data)
	for _, src := range []struct{ path, tensor string }{{npy, ""}, {st, "layer.weight"}, {st + "#layer.weight", ""}} {
		tt, err := ReadTensor(src.path, src.tensor)
		if err != nil {
			t.Fatal(err)
		}
		p := tensorcore.Pattern{N: 2, M: 4}
		if _, err := Prune(tt, src.path, p, true); err != nil {
			t.Fatal(err)
		}
		v, _ := Prune(tt, src.path, p, true)
		if v.Summary.InputValid || v.Summary.ValidMask || v.Compressed != nil ||
			!strings.Contains(v.Summary.InputError, "not 2:4 sparse: row 0") {
			t.Errorf("verify of a dense tensor: %+v", v.Summary)
		}
		r, err := Prune(tt, src.path, p, false)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Summary
		if !s.ValidMask || s.InputValid || s.Sparsity != 0.5 || s.NonzeroOut != m*k/2 ||
			s.KeptMagnitude <= 0.5 || s.KeptMagnitude >= 1 || s.MetadataBytes != m*k/2*2/8 {
			t.Errorf("prune summary %+v", s)
		}
		out := filepath.Join(dir, "out")
		if err := r.WriteDir(out); err != nil {
			t.Fatal(err)
		}
		// The directory loads back with the same mask and metadata.
		lw, err := LoadWeights(out, m, k)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lw.Matrix, r.Pruned) ||
			!reflect.DeepEqual(lw.Compressed.Metadata(), r.Compressed.Metadata()) {
			t.Error("LoadWeights(dir) differs from the pruned result")
		}
		// The pruned .npy verifies as 2:4 and loads as a weight too.
		pt, err := ReadTensor(filepath.Join(out, PrunedFile), "")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := Prune(pt, "pruned", p, true); !v.Summary.InputValid || !v.Summary.ValidMask {
			t.Errorf("pruned.npy does not verify: %+v", v.Summary)
		}
		if _, err := LoadWeights(filepath.Join(out, PrunedFile), m, k); err != nil {
			t.Error(err)
		}
	}
}

func TestLoadWeightsErrors(t *testing.T) {
	dir := t.TempDir()
	npy, _ := writeTensorFiles(t, dir, []int{8, 16}, SyntheticWeights(8, 16, 1).Data)
	odd := filepath.Join(dir, "odd.npy")
	var b bytes.Buffer
	tensorfile.WriteNPY(&b, []int{4, 6}, make([]float32, 24))
	os.WriteFile(odd, b.Bytes(), 0o644)
	// A float32 file cut short, and the same header naming int8 data.
	var f32 bytes.Buffer
	tensorfile.WriteNPY(&f32, []int{8, 16}, make([]float32, 128))
	trunc := filepath.Join(dir, "trunc.npy")
	os.WriteFile(trunc, f32.Bytes()[:f32.Len()-28], 0o644)
	i8 := filepath.Join(dir, "int8.npy")
	os.WriteFile(i8, bytes.Replace(f32.Bytes(), []byte("'<f4'"), []byte("'|i1'"), 1)[:f32.Len()-384], 0o644)
	cases := []struct {
		path string
		m, k int
		want string
	}{
		{npy, 8, 16, "not 2:4 sparse: row 0"}, // dense weights: prune first
		{npy, 16, 8, "trace row wants 16x8"},
		{odd, 4, 6, "K = 6 is not a multiple of 4"},
		{trunc, 8, 16, "truncated"},
		{i8, 8, 16, `unsupported dtype "|i1"`},
		{filepath.Join(dir, "none.npy"), 8, 16, "no such file"},
		{filepath.Join(dir, "w.pt"), 8, 16, `unknown extension ".pt"`},
	}
	for _, c := range cases {
		if _, err := LoadWeights(c.path, c.m, c.k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadWeights(%s, %d, %d) error %v, want %q", c.path, c.m, c.k, err, c.want)
		}
	}
}

func TestConvWeights(t *testing.T) {
	// A [O=2, C=4, R=1, S=2] conv weight: the GEMM view is 2 x (1*2*4)
	// with C fastest, so 2:4 groups run along input channels.
	shape := []int{2, 4, 1, 2}
	data := make([]float32, 16)
	for i := range data {
		data[i] = float32(i + 1)
	}
	tt := &Tensor{Shape: shape, Data: data}
	v, err := tt.GEMMView()
	if err != nil {
		t.Fatal(err)
	}
	// row 0: (s=0: c=0..3) = w[0,c,0,0] = 1,3,5,7; (s=1) = 2,4,6,8.
	if want := []float32{1, 3, 5, 7, 2, 4, 6, 8}; !reflect.DeepEqual(v.Data[:8], want) {
		t.Errorf("GEMM view row 0 = %v, want %v", v.Data[:8], want)
	}
	if !reflect.DeepEqual(tt.FromGEMMView(v), data) {
		t.Error("fromGEMMView does not invert GEMMView")
	}
	if _, err := (&Tensor{Shape: []int{2, 2, 2}, Data: make([]float32, 8)}).GEMMView(); err == nil {
		t.Error("3-D weight accepted")
	}
}

func TestRowWeights(t *testing.T) {
	dir := t.TempDir()
	// A 40 x 64 fc weight in a row padded to 64 x 64.
	w := tensorcore.PruneMagnitude(SyntheticWeights(40, 64, 3), tensorcore.Pattern{N: 2, M: 4})
	npy, _ := writeTensorFiles(t, dir, []int{40, 64}, w.Data)
	g := Pad(GEMM{Name: "fc", M: 40, N: 8, K: 64, Precision: tensorcore.FP16, Sparsity: "2:4",
		Count: 1, Batch: 1, Weights: npy})
	if g.M != 64 || g.UnpaddedM != 40 {
		t.Fatalf("Pad = %+v", g)
	}
	rw, err := RowWeights(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rw.Matrix.Rows != 64 || rw.Matrix.At(39, 0) != w.At(39, 0) || rw.Matrix.At(40, 0) != 0 ||
		rw.Compressed.Rows != 64 {
		t.Errorf("padded weights wrong: %dx%d", rw.Matrix.Rows, rw.Matrix.Cols)
	}
	// Without a file: synthetic, seeded, deterministic, 2:4.
	g.Weights = ""
	a, err := RowWeights(g, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RowWeights(g, 42)
	c, _ := RowWeights(g, 43)
	if !reflect.DeepEqual(a.Matrix, b.Matrix) || reflect.DeepEqual(a.Matrix, c.Matrix) ||
		tensorcore.CheckPattern(a.Matrix, tensorcore.Pattern{N: 2, M: 4}) != nil {
		t.Error("synthetic row weights not seeded, deterministic and 2:4")
	}
	if _, err := RowWeights(GEMM{Name: "s", M: 4, K: 4, Sparsity: Dense}, 0); err == nil {
		t.Error("RowWeights of a dense row should fail")
	}
}

func TestSyntheticTile(t *testing.T) {
	full := SyntheticWeights(16, 32, 9)
	tile := SyntheticTile(16, 32, 9, 4, 8, 3, 5)
	for r := range 3 {
		for c := range 5 {
			if tile.At(r, c) != full.At(4+r, 8+c) {
				t.Fatalf("tile (%d,%d) differs from the full matrix", r, c)
			}
		}
	}
	var sum float64
	for _, v := range full.Data {
		if v < -1 || v >= 1 {
			t.Fatalf("value %v outside [-1, 1)", v)
		}
		sum += float64(v)
	}
	if mean := sum / float64(len(full.Data)); math.Abs(mean) > 0.1 {
		t.Errorf("mean %v far from 0", mean)
	}
}

func TestWeightsTile(t *testing.T) {
	g := GEMM{Name: "l", M: 32, N: 8, K: 64, Precision: tensorcore.FP16, Sparsity: "2:4", Count: 1, Batch: 1}
	w, err := RowWeights(g, 5)
	if err != nil {
		t.Fatal(err)
	}
	tile, err := w.Tile(16, 32, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	d := tile.Decompress()
	for r := range 16 {
		for c := range 32 {
			if d.At(r, c) != w.Matrix.At(16+r, 32+c) {
				t.Fatalf("tile (%d,%d) differs", r, c)
			}
		}
	}
	for _, c := range [][4]int{{0, 2, 16, 32}, {20, 0, 16, 32}, {0, 0, 0, 4}, {0, 0, 16, 30}} {
		if _, err := w.Tile(c[0], c[1], c[2], c[3]); err == nil {
			t.Errorf("Tile%v accepted", c)
		}
	}
}

// HashWeights covers what the weights are: one changed byte of a pruned
// directory's metadata, or another tensor of the same .safetensors file,
// gives another hash; a missing part is an error naming the path.
func TestHashWeightsCoversContent(t *testing.T) {
	dir := t.TempDir()
	const m, k = 8, 16
	_, st := writeTensorFiles(t, dir, []int{m, k}, SyntheticWeights(m, k, 7).Data)
	tt, err := ReadTensor(st, "layer.weight")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Prune(tt, st, tensorcore.Pattern{N: 2, M: 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := r.WriteDir(out); err != nil {
		t.Fatal(err)
	}
	h1, err := HashWeights(out)
	if err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(out, MetadataFile)
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if h2, err := HashWeights(out); err != nil || h2 == h1 {
		t.Errorf("metadata changed: hash %s (was %s), err %v", h2, h1, err)
	}
	a, errA := HashWeights(st + "#layer.weight")
	o, errO := HashWeights(st + "#other")
	if errA != nil || errO != nil || a == o {
		t.Errorf("two tensors of one file: %s, %s (%v, %v)", a, o, errA, errO)
	}
	os.Remove(filepath.Join(out, ValuesFile))
	if _, err := HashWeights(out); err == nil || !strings.Contains(err.Error(), out) {
		t.Errorf("missing values file: %v", err)
	}
}
