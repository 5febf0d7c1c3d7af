package tensorfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
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
