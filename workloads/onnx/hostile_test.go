package onnx

import (
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// The two crash models of issue 51, whole files as its harness found
// them (the issue gives them as hex): issue51-slice-step.onnx slices
// with a step of 2^63-1 ("index out of range"); issue51-reshape-rank.onnx
// reshapes by a shape tensor declared [2^30] with no data (an 8 GiB
// allocation).
const (
	sliceStepModel   = "../testdata/issue51-slice-step.onnx"
	reshapeRankModel = "../testdata/issue51-reshape-rank.onnx"
)

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func str(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), S: []byte(v),
		Type: onnxpb.AttributeProto_STRING.Enum()}
}

// pooled is x [1 3 8 8] -> op (with attrs) -> Flatten -> MatMul with
// fc.weight [k, 16].
func pooled(t testing.TB, op string, k int64, attrs ...*onnxpb.AttributeProto) []byte {
	return model(t, []*onnxpb.NodeProto{
		node("/pool", op, []string{"x"}, []string{"p"}, attrs...),
		node("/flat", "Flatten", []string{"p"}, []string{"f"}),
		node("/fc/MatMul", "MatMul", []string{"f", "fc.weight"}, []string{"y"}),
	}, tensorInput("x", 1, 3, 8, 8), tensorInput("fc.weight", k, 16))
}

// TestSliceWithAHugeStepImports: a step beyond the dim takes one
// element, as ONNX's Slice does (the importer indexed out of range).
func TestSliceWithAHugeStepImports(t *testing.T) {
	r, err := Import(read(t, sliceStepModel), "s.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Layers) != 1 {
		t.Fatalf("layers %+v", r.Layers)
	}
	for _, c := range []struct{ start, end, step, d, lo, cnt int64 }{
		{0, 8, 1<<63 - 1, 8, 0, 1}, {7, -9, -1 << 63, 8, 7, 1}, {0, 8, 3, 8, 0, 3},
		{7, -9, -2, 8, 7, 4}, {2, 2, 1, 8, 2, 0}, {0, 1 << 62, 1 << 40, 1 << 30, 0, 1},
	} {
		step := min(max(c.step, -c.d), c.d)
		lo, _, cnt := sliceRange(c.start, c.end, step, c.d)
		if lo != c.lo || cnt != c.cnt {
			t.Errorf("slice %d:%d:%d of %d: first %d count %d, want %d %d", c.start, c.end, c.step, c.d, lo, cnt, c.lo, c.cnt)
		}
	}
}

// TestHostileModelsAreRefused: ranks, kernels and attributes a few bytes
// can declare are refused by a bounded message naming the file and the
// node, before anything is allocated for them.
func TestHostileModelsAreRefused(t *testing.T) {
	dims := make([]int64, MaxRank+1)
	for i := range dims {
		dims[i] = 1
	}
	axes := make([]int64, 1000)
	for i := range axes {
		axes[i] = int64(i)
	}
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"reshape to rank 2^30", read(t, reshapeRankModel),
			[]string{"r.onnx", `node "reshape" ("Reshape")`, "rank 1073741824", "limit of 64"}},
		{"MaxPool kernel 0", pooled(t, "MaxPool", 192, ints("kernel_shape", 0, 0)),
			[]string{"r.onnx", `node "/pool" ("MaxPool")`, "kernel [0 0]", "want 1..1048576"}},
		{"MaxPool kernel -3", pooled(t, "MaxPool", 192, ints("kernel_shape", -3, 2)),
			[]string{"r.onnx", `"MaxPool"`, "kernel dim of -3"}},
		{"AveragePool kernel 2^40", pooled(t, "AveragePool", 192, ints("kernel_shape", 1<<40, 1)),
			[]string{"r.onnx", `"AveragePool"`, "out of range"}},
		{"long auto_pad", pooled(t, "MaxPool", 48, ints("kernel_shape", 2, 2), str("auto_pad", strings.Repeat("X", 100000))),
			[]string{"r.onnx", "auto_pad", "(100000 bytes)"}},
		{"input of rank 65", model(t, []*onnxpb.NodeProto{
			node("/fc/MatMul", "MatMul", []string{"x", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", dims...), tensorInput("fc.weight", 1, 32)),
			[]string{"r.onnx", `graph input "x"`, "rank 65"}},
		{"unsqueeze by 1000 axes", model(t, []*onnxpb.NodeProto{
			node("/u", "Unsqueeze", []string{"x"}, []string{"u"}, ints("axes", axes...)),
			node("/fc/MatMul", "MatMul", []string{"u", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 8, 64), tensorInput("fc.weight", 64, 32)),
			[]string{"r.onnx", `node "/u" ("Unsqueeze")`, "rank 1002"}},
		{"constant of shape rank 1000", model(t, []*onnxpb.NodeProto{
			node("/c", "Constant", nil, []string{"s"}, ints("value_ints", axes...)),
			node("/cs", "ConstantOfShape", []string{"s"}, []string{"z"}),
			node("/fc/MatMul", "MatMul", []string{"z", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 8, 64), tensorInput("fc.weight", 64, 32)),
			[]string{"r.onnx", `node "/cs" ("ConstantOfShape")`, "rank 1000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(c.data, "r.onnx", Options{})
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(err.Error()) > 400 {
				t.Errorf("a %d-byte message", len(err.Error()))
			}
		})
	}
}

// TestHighRankShapesAreQuotedBoundedly: a message about a rank-64 shape
// prints 8 dims and the rank.
func TestHighRankShapesAreQuotedBoundedly(t *testing.T) {
	dims := make([]int64, MaxRank)
	for i := range dims {
		dims[i] = 1 << 29
	}
	s := shapeString(dims)
	if len(s) > 120 || !strings.Contains(s, "(rank 64)") {
		t.Errorf("shape printed as %q", s)
	}
}

// TestConcatFoldingIsBounded: a Concat of one folded constant repeated
// many times is not folded past maxValues values.
func TestConcatFoldingIsBounded(t *testing.T) {
	big := make([]int64, maxValues)
	in := make([]string, 64)
	for i := range in {
		in[i] = "c"
	}
	g := &graph{file: "c.onnx", values: map[string]*value{"c": {shape: []int64{maxValues}, ints: big}}}
	out := g.concat(node("/cat", "Concat", in, []string{"y"}, ints("axis", 0)))
	if out[0].ints != nil || len(out[0].shape) != 1 || out[0].shape[0] != 64*maxValues {
		t.Errorf("folded %d values, shape %v", len(out[0].ints), out[0].shape)
	}
}
