package onnx

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

func ints(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Ints: v, Type: onnxpb.AttributeProto_INTS.Enum()}
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), I: proto.Int64(v), Type: onnxpb.AttributeProto_INT.Enum()}
}

// constInts is a Constant node holding an int64 vector.
func constInts(out string, v ...int64) *onnxpb.NodeProto {
	return node(out, "Constant", nil, []string{out}, &onnxpb.AttributeProto{Name: proto.String("value"),
		Type: onnxpb.AttributeProto_TENSOR.Enum(), T: &onnxpb.TensorProto{Dims: []int64{int64(len(v))},
			DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: v}})
}

func layers(t *testing.T, nodes []*onnxpb.NodeProto, inputs ...*onnxpb.ValueInfoProto) []workloads.ImportedLayer {
	t.Helper()
	r, err := Import(model(t, nodes, inputs...), "t.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Layers
}

type mnk struct{ m, n, k, batch int }

func check(t *testing.T, got []workloads.ImportedLayer, want ...mnk) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d layers %+v, want %d", len(got), got, len(want))
	}
	for i, l := range got {
		if g := (mnk{l.M, l.N, l.K, max(l.Batch, 1)}); g != want[i] {
			t.Errorf("layer %d %s: %+v, want %+v", i, l.Name, g, want[i])
		}
	}
}

// TestConvShapes: strides, pads, dilations, groups (expected sizes from
// floor((H + 2p - d(R-1) - 1) / s) + 1).
func TestConvShapes(t *testing.T) {
	got := layers(t, []*onnxpb.NodeProto{
		node("/a/Conv", "Conv", []string{"x", "a.weight"}, []string{"y"},
			ints("strides", 2, 2), ints("pads", 1, 1, 1, 1), ints("dilations", 2, 2)),
		node("/g/Conv", "Conv", []string{"y", "g.weight"}, []string{"z"}, intAttr("group", 4)),
		node("/dw/Conv", "Conv", []string{"z", "dw.weight"}, []string{"w"}, intAttr("group", 32),
			ints("pads", 1, 1, 1, 1)),
	}, tensorInput("x", 2, 16, 33, 33), tensorInput("a.weight", 32, 16, 3, 3),
		tensorInput("g.weight", 32, 8, 1, 1), tensorInput("dw.weight", 32, 1, 3, 3))
	// a: (33 + 2 - 4 - 1) / 2 + 1 = 16; g: 1x1; dw: pad 1 keeps 16
	check(t, got, mnk{32, 2 * 16 * 16, 16 * 9, 1}, mnk{8, 2 * 16 * 16, 8, 4}, mnk{1, 2 * 16 * 16, 9, 32})
}

// TestProductShapes: Gemm with transA, MatMul with a batch broadcast
// (attention), a weight on the left, Reshape with 0 and -1, Split.
func TestProductShapes(t *testing.T) {
	got := layers(t, []*onnxpb.NodeProto{
		node("/g/Gemm", "Gemm", []string{"xt", "g.weight"}, []string{"h"}, intAttr("transA", 1)),
		constInts("shape", 0, 4, -1),
		node("/r/Reshape", "Reshape", []string{"h", "shape"}, []string{"hr"}), // [8, 4, 8]
		node("/s/Split", "Split", []string{"hr"}, []string{"q", "k"}, intAttr("axis", 2)),
		node("/t/Transpose", "Transpose", []string{"k"}, []string{"kt"}, ints("perm", 0, 2, 1)),
		node("/att/MatMul", "MatMul", []string{"q", "kt"}, []string{"s"}), // [8,4,4] x [8,4,4]
		node("/left/MatMul", "MatMul", []string{"left.weight", "s"}, []string{"o"}),
	}, tensorInput("xt", 64, 8), tensorInput("g.weight", 64, 32), tensorInput("left.weight", 16, 4))
	check(t, got,
		mnk{32, 8, 64, 1},    // Gemm: A' = xt^T [8, 64], W [64, 32]: M = 32, N = 8, K = 64
		mnk{4, 4, 4, 8},      // q [8,4,4] x kt [8,4,4], transposed: M = 4, N = 4, K = 4, batch 8
		mnk{16, 8 * 4, 4, 1}) // W [16, 4] x s [8, 4, 4]: M = 16, N = 8 x 4, K = 4
	if got[0].Prunable != true || got[1].Prunable || !got[2].Prunable {
		t.Errorf("prunable: %v %v %v", got[0].Prunable, got[1].Prunable, got[2].Prunable)
	}
}

// TestSliceFlattenPool: MaxPool with ceil_mode, Slice on a channel range,
// Flatten into a Gemm.
func TestSliceFlattenPool(t *testing.T) {
	got := layers(t, []*onnxpb.NodeProto{
		node("/p/MaxPool", "MaxPool", []string{"x"}, []string{"p"}, ints("kernel_shape", 3, 3),
			ints("strides", 2, 2), intAttr("ceil_mode", 1)), // (8 - 3) / 2 ceil + 1 = 4
		constInts("st", 0), constInts("en", 6), constInts("ax", 1),
		node("/sl/Slice", "Slice", []string{"p", "st", "en", "ax"}, []string{"s"}), // [2, 6, 4, 4]
		node("/f/Flatten", "Flatten", []string{"s"}, []string{"f"}),
		node("/fc/Gemm", "Gemm", []string{"f", "fc.weight"}, []string{"y"}, intAttr("transB", 1)),
	}, tensorInput("x", 2, 10, 8, 8), tensorInput("fc.weight", 5, 96))
	check(t, got, mnk{5, 2, 96, 1})
}
