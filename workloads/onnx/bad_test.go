package onnx

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// node, tensorInput and model build small graphs for the tests.
func node(name, op string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{Name: proto.String(name), OpType: proto.String(op),
		Input: in, Output: out, Attribute: attrs}
}

func tensorInput(name string, dims ...int64) *onnxpb.ValueInfoProto {
	var ds []*onnxpb.TensorShapeProto_Dimension
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		if d < 0 {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}
		} else {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
		}
		ds = append(ds, dim)
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{
		Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(1), Shape: &onnxpb.TensorShapeProto{Dim: ds}}}}}
}

func model(t testing.TB, nodes []*onnxpb.NodeProto, inputs ...*onnxpb.ValueInfoProto) []byte {
	t.Helper()
	b, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8),
		Graph: &onnxpb.GraphProto{Node: nodes, Input: inputs}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mlp is x [batch, 64] -> MatMul with the parameter "fc.weight" [64, 32].
func mlp(t testing.TB, extra ...*onnxpb.NodeProto) []byte {
	nodes := append([]*onnxpb.NodeProto{node("/fc/MatMul", "MatMul", []string{"x", "fc.weight"}, []string{"y"})}, extra...)
	return model(t, nodes, tensorInput("x", -1, 64), tensorInput("fc.weight", 64, 32))
}

func TestSmallModelImports(t *testing.T) {
	r, err := Import(mlp(t), "m.onnx", Options{Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Layers) != 1 {
		t.Fatalf("layers %+v", r.Layers)
	}
	l := r.Layers[0]
	if l.Name != "fc" || l.M != 32 || l.N != 8 || l.K != 64 || !l.Prunable {
		t.Errorf("layer %+v, want fc 32x8x64 prunable", l)
	}
}

// TestBadInput: every bad file is an error naming the file (and the node
// where there is one), with a bounded message; nothing panics.
func TestBadInput(t *testing.T) {
	r50, err := os.ReadFile("../testdata/resnet50.onnx")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := os.ReadFile("../testdata/encoder.onnx")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 100000)
	cases := []struct {
		name string
		data []byte
		o    Options
		want []string
	}{
		{"not ONNX", []byte("name,m,n,k\nfc,1,2,3\n"), Options{}, []string{"bad.onnx", "not an ONNX model"}},
		{"empty", nil, Options{}, []string{"bad.onnx", "not an ONNX model"}},
		{"truncated", r50[:len(r50)/2], Options{Batch: 1}, []string{"bad.onnx", "not an ONNX model", "truncated"}},
		{"unknown op feeding a GEMM", model(t, []*onnxpb.NodeProto{
			node("/act/Frobnicate", "Frobnicate", []string{"x"}, []string{"h"}),
			node("/fc/MatMul", "MatMul", []string{"h", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 8, 64), tensorInput("fc.weight", 64, 32)), Options{},
			[]string{"bad.onnx", `node "/fc/MatMul"`, `"/act/Frobnicate" ("Frobnicate")`, "unknown"}},
		{"dim stays unknown", enc, Options{Batch: 32},
			[]string{"bad.onnx", `node "/layers.0/self_attn/MatMul"`, "stay unknown", `"batch" "seq" 768`, "inputs input=DIMS", "batch N"}},
		{"symbolic dim without --batch", mlp(t), Options{},
			[]string{"bad.onnx", `node "/fc/MatMul"`, `graph input "x"`, "inputs x=DIMS"}},
		{"cycle", model(t, []*onnxpb.NodeProto{
			node("a", "Relu", []string{"c"}, []string{"b"}),
			node("b", "Relu", []string{"b"}, []string{"c"}),
			node("/fc/MatMul", "MatMul", []string{"x", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 8, 64), tensorInput("fc.weight", 64, 32)), Options{},
			[]string{"bad.onnx", `node "a"`, "cycle"}},
		{"input nobody makes", model(t, []*onnxpb.NodeProto{
			node("/fc/MatMul", "MatMul", []string{"ghost", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 8, 64), tensorInput("fc.weight", 64, 32)), Options{},
			[]string{"bad.onnx", `node "/fc/MatMul"`, `"ghost"`}},
		{"huge input dim", model(t, []*onnxpb.NodeProto{
			node("/fc/MatMul", "MatMul", []string{"x", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 1<<40, 64), tensorInput("fc.weight", 64, 32)), Options{},
			[]string{"bad.onnx", `graph input "x"`, "outside"}},
		{"huge product", model(t, []*onnxpb.NodeProto{
			node("/fc/MatMul", "MatMul", []string{"x", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", 1<<20, 1<<20, 64), tensorInput("fc.weight", 64, 32)), Options{},
			[]string{"bad.onnx", `node "/fc/MatMul"`, "limit"}},
		{"--input of no input", mlp(t), Options{Inputs: []Input{{"y", []int64{1, 64}}}},
			[]string{"bad.onnx", `inputs "y"`, "no such graph input", `"x"`}},
		{"--input against a fixed dim", mlp(t), Options{Inputs: []Input{{"x", []int64{4, 65}}}},
			[]string{"bad.onnx", `inputs "x"`, "dim 1 is 64"}},
		{"long node name", model(t, []*onnxpb.NodeProto{
			node(long, "MatMul", []string{"x", "fc.weight"}, []string{"y"}),
		}, tensorInput("x", -1, 64), tensorInput("fc.weight", 64, 32)), Options{},
			[]string{"bad.onnx", "(100000 bytes)"}},
		{"no GEMM", model(t, []*onnxpb.NodeProto{node("r", "Relu", []string{"x"}, []string{"y"})},
			tensorInput("x", 8, 64)), Options{}, []string{"bad.onnx", "no Conv, Gemm or MatMul"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(c.data, "bad.onnx", c.o)
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(err.Error()) > 600 {
				t.Errorf("a %d-byte message", len(err.Error()))
			}
		})
	}
}

// TestUnknownOpOffThePathIsSkipped: an unknown operator whose outputs no
// GEMM needs is left out and named in Skipped.
func TestUnknownOpOffThePathIsSkipped(t *testing.T) {
	r, err := Import(mlp(t, node("/post/Frobnicate", "Frobnicate", []string{"y"}, []string{"z"})),
		"m.onnx", Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0], `"/post/Frobnicate" ("Frobnicate")`) ||
		!strings.Contains(r.Skipped[0], "skipped") {
		t.Errorf("skipped %q", r.Skipped)
	}
}

// TestHugeInitializerWithoutDataAllocatesNothing: an initializer whose
// dims promise 2^30 floats but which holds no data is a weight without
// data, found without allocating for it.
func TestHugeInitializerWithoutDataAllocatesNothing(t *testing.T) {
	b, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: &onnxpb.GraphProto{
		Node:        []*onnxpb.NodeProto{node("/fc/MatMul", "MatMul", []string{"x", "w"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("w"), Dims: []int64{1 << 15, 1 << 15}, DataType: proto.Int32(1)}},
		Input:       []*onnxpb.ValueInfoProto{tensorInput("x", 8, 1<<15)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() {
		r, err := Import(b, "h.onnx", Options{})
		if err != nil || len(r.Layers) != 1 || len(r.Weights) != 0 {
			t.Fatalf("import: %v %+v", err, r)
		}
	})
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.TotalAlloc > 1<<30 {
		t.Errorf("allocated %d bytes in all (%.0f allocations a run)", ms.TotalAlloc, allocs)
	}
}
