package importer

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// weight is an [rows, cols] float32 initializer; keep24 zeroes the
// first two of every four values along each row (a 2:4 mask).
func weight(name string, rows, cols int, keep24 bool) *onnxpb.TensorProto {
	raw := make([]byte, 4*rows*cols)
	for i := range rows * cols {
		v := float32(i%7) + 1
		if keep24 && i%4 < 2 {
			v = 0
		}
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{int64(rows), int64(cols)},
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), RawData: raw}
}

func transposed(t *onnxpb.TensorProto) *onnxpb.TensorProto {
	r, c := int(t.Dims[0]), int(t.Dims[1])
	raw := make([]byte, len(t.RawData))
	for i := range r {
		for j := range c {
			copy(raw[4*(j*r+i):], t.RawData[4*(i*c+j):4*(i*c+j)+4])
		}
	}
	out := proto.Clone(t).(*onnxpb.TensorProto)
	out.Dims, out.RawData = []int64{int64(c), int64(r)}, raw
	return out
}

// mlp: x [4, 64] -> Gemm fc1 (W [64 out, 64 in], transB, 2:4) -> MatMul
// fc2 (W^T stored [64 in, 32 out], 2:4 in [out, in]) -> Gemm fc3 (dense).
func mlp(t *testing.T) string {
	t.Helper()
	transB := &onnxpb.AttributeProto{Name: proto.String("transB"), I: proto.Int64(1),
		Type: onnxpb.AttributeProto_INT.Enum()}
	w2 := weight("fc2.weight", 32, 64, true)
	g := &onnxpb.GraphProto{
		Node: []*onnxpb.NodeProto{
			{Name: proto.String("/fc1/Gemm"), OpType: proto.String("Gemm"), Input: []string{"x", "fc1.weight"}, Output: []string{"h1"}, Attribute: []*onnxpb.AttributeProto{transB}},
			{Name: proto.String("/fc2/MatMul"), OpType: proto.String("MatMul"), Input: []string{"h1", "fc2.wt"}, Output: []string{"h2"}},
			{Name: proto.String("/fc3/Gemm"), OpType: proto.String("Gemm"), Input: []string{"h2", "fc3.weight"}, Output: []string{"y"}, Attribute: []*onnxpb.AttributeProto{transB}},
		},
		Initializer: []*onnxpb.TensorProto{weight("fc1.weight", 64, 64, true),
			func() *onnxpb.TensorProto { w := transposed(w2); w.Name = proto.String("fc2.wt"); return w }(),
			weight("fc3.weight", 32, 32, false)},
		Input: []*onnxpb.ValueInfoProto{{Name: proto.String("x"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(1), Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
				{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 4}},
				{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 64}}}}}}}}},
	}
	b, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkFC2: mlp's fc2 weight as the weights column wants it, [out 32,
// in 64]: row 0 is the first 64 values of the [out, in] tensor, whose
// first two are 0.
func checkFC2(t *testing.T, w *workloads.Weights) {
	t.Helper()
	if w.Matrix.Rows != 32 || w.Matrix.Cols != 64 || w.Matrix.At(0, 0) != 0 || w.Matrix.At(0, 2) != 3 {
		t.Errorf("fc2 weight %dx%d, w[0][0..3] = %v %v %v %v", w.Matrix.Rows, w.Matrix.Cols,
			w.Matrix.At(0, 0), w.Matrix.At(0, 1), w.Matrix.At(0, 2), w.Matrix.At(0, 3))
	}
}

// TestWeightsOut: 2:4 weights (also one stored transposed for MatMul)
// are named in their rows and load as the row's weights; a dense one is
// written, not named, and the import says so.
func TestWeightsOut(t *testing.T) {
	path := mlp(t)
	dir := filepath.Join(t.TempDir(), "w")
	im, err := Load(path, Options{WeightsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rows := im.Trace.GEMMs
	if len(rows) != 3 || rows[0].Weights != filepath.Join(dir, "fc1.npy") ||
		rows[1].Weights != filepath.Join(dir, "fc2.npy") || rows[2].Weights != "" {
		t.Fatalf("rows %+v", rows)
	}
	w, err := workloads.LoadRowWeights(rows[1])
	if err != nil {
		t.Fatal(err)
	}
	checkFC2(t, w)
	if _, err := os.Stat(filepath.Join(dir, "fc3.npy")); err != nil {
		t.Errorf("the dense weight was not written: %v", err)
	}
	joined := strings.Join(im.Import.Skipped, "\n")
	if !strings.Contains(joined, "weights of fc3 are not 2:4 along K") || !strings.Contains(joined, "stcsim prune") {
		t.Errorf("skipped %q", im.Import.Skipped)
	}
}

// TestWithoutWeightsOutSaysSo: the weights are not attached and the
// import says how to attach them.
func TestWithoutWeightsOutSaysSo(t *testing.T) {
	im, err := Load(mlp(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range im.Trace.GEMMs {
		if g.Weights != "" {
			t.Errorf("row %s names %s", g.Name, g.Weights)
		}
	}
	if len(im.Import.Skipped) != 1 || !strings.Contains(im.Import.Skipped[0], "--weights-out") {
		t.Errorf("skipped %q", im.Import.Skipped)
	}
}

// TestAttachReadsTheGraphsWeights: for a run of the graph itself, the 2:4
// weights are named as "FILE#LAYER" and read from memory as the row's
// weights (the same matrix --weights-out writes); nothing is written; a
// dense weight says its row uses the generated pattern; a reference the
// process did not import is an error that says how to get the weights.
func TestAttachReadsTheGraphsWeights(t *testing.T) {
	path := mlp(t)
	im, err := Load(path, Options{Attach: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := im.Trace.GEMMs
	if len(rows) != 3 || rows[0].Weights != path+"#fc1" || rows[1].Weights != path+"#fc2" || rows[2].Weights != "" {
		t.Fatalf("rows %+v", rows)
	}
	w, err := workloads.LoadRowWeights(rows[1])
	if err != nil {
		t.Fatal(err)
	}
	checkFC2(t, w)
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("files beside the model: %v", ents)
	}
	h1, err1 := workloads.HashWeights(rows[0].Weights)
	h2, err2 := workloads.HashWeights(rows[1].Weights)
	if err1 != nil || err2 != nil || h1 == h2 {
		t.Errorf("weights hashes %s %v, %s %v: want two, distinct", h1, err1, h2, err2)
	}
	joined := strings.Join(im.Import.Skipped, "\n")
	if !strings.Contains(joined, "weights of fc3 are not 2:4 along K: its sparse row uses the generated pattern") {
		t.Errorf("skipped %q", im.Import.Skipped)
	}
	g := rows[0]
	g.Weights = path + "#nosuch"
	if _, err := workloads.LoadRowWeights(g); err == nil || !strings.Contains(err.Error(), "(run workload ") {
		t.Errorf("an unimported reference: %v", err)
	}
}

// TestImportIsDeterministic: the same file gives byte-identical traces.
func TestImportIsDeterministic(t *testing.T) {
	var outs [2]bytes.Buffer
	for i := range outs {
		im, err := Load("../testdata/resnet50.onnx", Options{Batch: 8, Precision: tensorcore.FP16})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Trace.WriteCSV(&outs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
		t.Error("two imports differ")
	}
}

// TestFailedImportWritesNothing: an import that fails writes no weights.
func TestFailedImportWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	if _, err := Load("../testdata/encoder.onnx", Options{Batch: 2, WeightsDir: dir}); err == nil {
		t.Fatal("imported with the sequence dim unknown")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a failed import wrote the weights directory")
	}
}
