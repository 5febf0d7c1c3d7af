package workloads

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// npyBytes builds a .npy file by hand: descr, shape literal, raw data.
func npyBytes(descr, shape string, fortran bool, data []byte) []byte {
	f := "False"
	if fortran {
		f = "True"
	}
	hdr := "{'descr': '" + descr + "', 'fortran_order': " + f + ", 'shape': " + shape + ", }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

func le16(vs ...uint16) []byte {
	b := make([]byte, 2*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

func le32f(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// safetensorsBytes builds a safetensors file with one raw tensor per entry.
func safetensorsBytes(entries map[string]safetensorsEntry, data []byte) []byte {
	js, _ := json.Marshal(entries)
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(js)))
	b.Write(js)
	b.Write(data)
	return b.Bytes()
}

func TestReadNPY(t *testing.T) {
	be := make([]byte, 8)
	binary.BigEndian.PutUint32(be, math.Float32bits(1.5))
	binary.BigEndian.PutUint32(be[4:], math.Float32bits(-2))
	f64 := make([]byte, 16)
	binary.LittleEndian.PutUint64(f64, math.Float64bits(0.25))
	binary.LittleEndian.PutUint64(f64[8:], math.Float64bits(-8))
	cases := []struct {
		name  string
		in    []byte
		shape []int
		data  []float32
		want  string
	}{
		// float16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, min
		// subnormal 2^-24 = 0x0001.
		{"f16", npyBytes("<f2", "(2, 2)", false, le16(0x3c00, 0xc000, 0x7bff, 0x0001)),
			[]int{2, 2}, []float32{1, -2, 65504, float32(math.Ldexp(1, -24))}, ""},
		{"f32", npyBytes("<f4", "(1, 2)", false, le32f(0.5, 3)), []int{1, 2}, []float32{0.5, 3}, ""},
		{"f32 big endian", npyBytes(">f4", "(2,)", false, be), []int{2}, []float32{1.5, -2}, ""},
		{"f64", npyBytes("<f8", "(2,)", false, f64), []int{2}, []float32{0.25, -8}, ""},
		{"int32", npyBytes("<i4", "(2,)", false, make([]byte, 8)), nil, nil, `unsupported dtype "<i4"`},
		{"bool", npyBytes("|b1", "(2,)", false, make([]byte, 2)), nil, nil, `dtype "|b1"`},
		{"fortran", npyBytes("<f4", "(2, 2)", true, make([]byte, 16)), nil, nil, "Fortran-order"},
		{"truncated", npyBytes("<f4", "(2, 2)", false, make([]byte, 15)), nil, nil, "truncated: data has 15 bytes, the header promises 16"},
		{"trailing", npyBytes("<f4", "(2,)", false, make([]byte, 9)), nil, nil, "trailing bytes"},
		{"bad magic", []byte("NUMPY\x01\x00"), nil, nil, "not a .npy file"},
		{"short", []byte("\x93NU"), nil, nil, "preamble"},
		{"bad header", npyBytes("<f4", "[2, 2]", false, nil), nil, nil, "shape: want a tuple"},
		{"huge shape", npyBytes("<f4", "(100000, 100000, 100000)", false, nil), nil, nil, "more than"},
		{"version", []byte("\x93NUMPY\x09\x00\x00\x00"), nil, nil, "version 9.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt, err := ReadNPY(bytes.NewReader(c.in), "w.npy")
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) ||
					!strings.Contains(err.Error(), "w.npy") {
					t.Fatalf("error %v, want %q naming w.npy", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.Shape, c.shape) || !reflect.DeepEqual(tt.Data, c.data) {
				t.Errorf("got %v %v, want %v %v", tt.Shape, tt.Data, c.shape, c.data)
			}
		})
	}
	// WriteNPY output reads back; the data starts on a 64-byte boundary.
	var b bytes.Buffer
	if err := WriteNPY(&b, []int{3, 2}, []float32{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	if (b.Len()-24)%64 != 0 {
		t.Errorf("header not padded to 64 bytes: file of %d bytes", b.Len())
	}
	back, err := ReadNPY(&b, "x")
	if err != nil || !reflect.DeepEqual(back.Data, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("WriteNPY round trip: %+v %v", back, err)
	}
}

func TestReadSafetensors(t *testing.T) {
	// bfloat16 1.0 = 0x3f80, -0.5 = 0xbf00; float16 2.0 = 0x4000.
	data := append(le16(0x3f80, 0xbf00), le16(0x4000, 0x4000)...)
	data = append(data, le32f(7)...)
	file := safetensorsBytes(map[string]safetensorsEntry{
		"a.bf16": {DType: "BF16", Shape: []int{1, 2}, DataOffsets: []int64{0, 4}},
		"b.f16":  {DType: "F16", Shape: []int{2}, DataOffsets: []int64{4, 8}},
		"c.f32":  {DType: "F32", Shape: []int{1}, DataOffsets: []int64{8, 12}},
	}, data)
	one := func(e safetensorsEntry, data []byte) []byte {
		return safetensorsBytes(map[string]safetensorsEntry{"t": e}, data)
	}
	files := map[string][]byte{
		"d.int":      one(safetensorsEntry{DType: "I32", Shape: []int{1}, DataOffsets: []int64{0, 4}}, le32f(1)),
		"e.bad":      one(safetensorsEntry{DType: "F32", Shape: []int{2}, DataOffsets: []int64{0, 4}}, le32f(1)),
		"f.past.end": one(safetensorsEntry{DType: "F32", Shape: []int{2}, DataOffsets: []int64{0, 8}}, le32f(1)),
		"g.trailing": one(safetensorsEntry{DType: "F32", Shape: []int{1}, DataOffsets: []int64{0, 4}}, append(le32f(1), 9)),
		"h.overlap": safetensorsBytes(map[string]safetensorsEntry{
			"t": {DType: "F32", Shape: []int{1}, DataOffsets: []int64{0, 4}},
			"u": {DType: "F32", Shape: []int{2}, DataOffsets: []int64{0, 8}},
		}, append(le32f(1), le32f(2)...)),
		"i.duplicate": func() []byte {
			js := `{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},` +
				`"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`
			var b bytes.Buffer
			binary.Write(&b, binary.LittleEndian, uint64(len(js)))
			b.WriteString(js)
			b.Write(le32f(1))
			return b.Bytes()
		}(),
		"j.nul": safetensorsBytes(map[string]safetensorsEntry{
			"w\x00x": {DType: "F32", Shape: []int{1}, DataOffsets: []int64{0, 4}},
		}, le32f(1)),
	}
	cases := []struct {
		tensor string
		data   []float32
		want   string
	}{
		{"a.bf16", []float32{1, -0.5}, ""},
		{"b.f16", []float32{2, 2}, ""},
		{"c.f32", []float32{7}, ""},
		{"d.int", nil, `unsupported dtype "I32"`},
		{"e.bad", nil, "data_offsets [0 4] do not hold 2"},
		{"f.past.end", nil, "truncated: 4 of 8 data bytes"},
		{"g.trailing", nil, "bytes after the last tensor's data"},
		{"h.overlap", nil, "overlap another tensor"},
		{"i.duplicate", nil, `tensor "t" listed twice`},
		{"j.nul", nil, `tensor name "w\x00x": control character`},
		{"zz", nil, `no tensor "zz" (have: a.bf16, b.f16`},
		{"", nil, "holds 3 tensors, name one"},
	}
	for _, c := range cases {
		f, name := file, c.tensor
		if bad, ok := files[c.tensor]; ok {
			f, name = bad, "t"
		}
		tt, err := ReadSafetensors(bytes.NewReader(f), "m.safetensors", name)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want %q", c.tensor, err, c.want)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(tt.Data, c.data) {
			t.Errorf("%s: %v %v, want %v", c.tensor, tt, err, c.data)
		}
	}
	for _, bad := range [][]byte{{1, 2}, append(le32f(0), 0, 0, 0, 0, '{')} {
		if _, err := ReadSafetensors(bytes.NewReader(bad), "t.safetensors", ""); err == nil {
			t.Errorf("ReadSafetensors(%q) accepted a bad file", bad)
		}
	}
}

// writeTensorFiles writes w (M x K, 2-D) as .npy and as a safetensors
// tensor "layer.weight" next to a second tensor.
func writeTensorFiles(t *testing.T, dir string, shape []int, data []float32) (npy, st string) {
	t.Helper()
	npy = filepath.Join(dir, "w.npy")
	var b bytes.Buffer
	if err := WriteNPY(&b, shape, data); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(npy, b.Bytes(), 0o644)
	st = filepath.Join(dir, "m.safetensors")
	b.Reset()
	if err := WriteSafetensors(&b, []Tensor{{Name: "other", Shape: []int{1}, Data: []float32{9}},
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
	WriteNPY(&b, []int{4, 6}, make([]float32, 24))
	os.WriteFile(odd, b.Bytes(), 0o644)
	trunc := filepath.Join(dir, "trunc.npy")
	os.WriteFile(trunc, npyBytes("<f4", "(8, 16)", false, make([]byte, 100)), 0o644)
	i8 := filepath.Join(dir, "int8.npy")
	os.WriteFile(i8, npyBytes("|i1", "(8, 16)", false, make([]byte, 128)), 0o644)
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
	if !reflect.DeepEqual(tt.fromGEMMView(v), data) {
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

func TestFloat16(t *testing.T) {
	cases := []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xbc00, -1}, {0x3555, 0.333251953125},
		{0x7bff, 65504}, {0x0400, float32(math.Ldexp(1, -14))},
		{0x03ff, float32(math.Ldexp(1023, -24))}, {0x7c00, float32(math.Inf(1))},
	}
	for _, c := range cases {
		if got := Float16ToFloat32(c.h); got != c.want {
			t.Errorf("Float16ToFloat32(%#04x) = %v, want %v", c.h, got, c.want)
		}
	}
	if !math.IsNaN(float64(Float16ToFloat32(0x7e00))) {
		t.Error("0x7e00 is not NaN")
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
