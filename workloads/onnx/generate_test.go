package onnx

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// gen turns fuzz bytes into a valid ONNX model with hostile contents: a
// chain of shape operators with attributes and integer tensors drawn
// from the extremes (0, -1, 2^30, 2^31, 2^63-1, -2^63, large ranks),
// ending in a MatMul so that the importer has a GEMM to work out.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// hostile are the values a field is drawn from; anything else comes
// from eight raw bytes.
var hostile = []int64{0, 1, -1, 2, 3, 4, 8, 64, 65, 1 << 20, 1 << 30, 1<<30 + 1, 1 << 31,
	1<<63 - 1, -1 << 63, -2, -(1 << 30)}

func (g *gen) int() int64 {
	c := g.byte()
	if int(c) < 2*len(hostile) {
		return hostile[int(c)%len(hostile)]
	}
	var raw [8]byte
	for i := range raw {
		raw[i] = g.byte()
	}
	return int64(binary.LittleEndian.Uint64(raw[:]))
}

func (g *gen) ints(max int) []int64 {
	n := int(g.byte()) % (max + 1)
	if g.byte() == 255 {
		n = 70 // above MaxRank
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = g.int()
	}
	return out
}

var genOps = []string{"Slice", "Reshape", "MaxPool", "AveragePool", "Conv", "Unsqueeze", "Squeeze",
	"Concat", "ConstantOfShape", "Gather", "Split", "Transpose", "Flatten", "Expand", "Shape",
	"Size", "ReduceMean", "Add", "Mul", "Div", "Where", "GlobalAveragePool", "Gemm", "MatMul", "Relu"}

var genAttrs = []string{"axis", "axes", "starts", "ends", "steps", "kernel_shape", "strides", "pads",
	"dilations", "perm", "split", "group", "start", "end", "allowzero", "keepdims", "transA", "transB",
	"ceil_mode", "auto_pad", "value_ints", "value_int"}

// constant is a Constant node of an int64 tensor whose declared dims
// may or may not match its data.
func (g *gen) constant(out string) *onnxpb.NodeProto {
	data := g.ints(8)
	dims := []int64{int64(len(data))}
	if g.byte()%4 == 0 {
		dims = g.ints(3)
	}
	return node(out, "Constant", nil, []string{out}, &onnxpb.AttributeProto{Name: proto.String("value"),
		Type: onnxpb.AttributeProto_TENSOR.Enum(), T: &onnxpb.TensorProto{Dims: dims,
			DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: data}})
}

func (g *gen) attr() *onnxpb.AttributeProto {
	name := genAttrs[int(g.byte())%len(genAttrs)]
	a := &onnxpb.AttributeProto{Name: proto.String(name)}
	switch g.byte() % 3 {
	case 0:
		a.Type, a.I = onnxpb.AttributeProto_INT.Enum(), proto.Int64(g.int())
	case 1:
		a.Type, a.Ints = onnxpb.AttributeProto_INTS.Enum(), g.ints(8)
	default:
		a.Type, a.S = onnxpb.AttributeProto_STRING.Enum(), []byte([]string{"SAME_UPPER", "VALID", "NOTSET",
			"\x1b[2J", strings.Repeat("P", 1000)}[int(g.byte())%5])
	}
	return a
}

// model builds the graph: input x of a drawn shape, up to 12 nodes each
// reading the last value and constants, then a MatMul with fc.weight.
func (g *gen) model() []byte {
	xdims := g.ints(6)
	var nodes []*onnxpb.NodeProto
	last := "x"
	for i := range int(g.byte()) % 12 {
		op := genOps[int(g.byte())%len(genOps)]
		in := []string{last}
		for range int(g.byte()) % 4 {
			c := fmt.Sprintf("c%d_%d", i, len(in))
			nodes = append(nodes, g.constant(c))
			in = append(in, c)
		}
		var attrs []*onnxpb.AttributeProto
		for range int(g.byte()) % 5 {
			attrs = append(attrs, g.attr())
		}
		out := fmt.Sprintf("v%d", i)
		outs := []string{out}
		if op == "Split" {
			outs = append(outs, out+"b")
		}
		nodes = append(nodes, node(fmt.Sprintf("/n%d", i), op, in, outs, attrs...))
		last = out
	}
	nodes = append(nodes, node("/fc/MatMul", "MatMul", []string{last, "fc.weight"}, []string{"y"}))
	k := g.int()
	if k < 0 || k > workloads.MaxDim {
		k = 64
	}
	b, err := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: &onnxpb.GraphProto{Node: nodes,
		Input: []*onnxpb.ValueInfoProto{tensorInput("x", xdims...), tensorInput("fc.weight", k, 16)}}})
	if err != nil {
		panic(err)
	}
	return b
}

// checkImport is what every fuzz target holds: no panic (the fuzzer
// reports one), an error names the file and stays within 400 bytes with
// no raw control character, and an accepted graph's layers are in
// bounds.
func checkImport(t *testing.T, data []byte, batch int) {
	r, err := Import(data, "f.onnx", Options{Batch: batch % 64})
	if err != nil {
		msg := err.Error()
		if len(msg) > 400 || !strings.HasPrefix(msg, "f.onnx: ") || strings.ContainsAny(msg, "\x1b\x07") {
			t.Fatalf("a %d-byte message: %.300q", len(msg), msg)
		}
		return
	}
	for _, l := range r.Layers {
		if l.M < 1 || l.N < 1 || l.K < 1 || l.M > workloads.MaxDim || l.N > workloads.MaxDim || l.K > workloads.MaxDim {
			t.Fatalf("layer %+v out of bounds", l)
		}
	}
}

// FuzzImportStructured: the bytes choose a valid model with hostile
// attributes (gen), so that the fuzzer spends its time in the shape
// inference rather than in the protobuf decoder. Seeded with the bytes
// that build issue 51's cases.
//
//	go test ./workloads/onnx -run '^$' -fuzz '^FuzzImportStructured$' -fuzztime 20000x -parallel 1
func FuzzImportStructured(f *testing.F) {
	// x [8 64] -> Slice with a step of 2^63-1 (hostile[13]).
	f.Add([]byte{2, 4, 6, 1, 0, 3, 3, 1, 3, 2, 1, 13, 0, 3, 20, 0, 0, 1, 4, 5, 6, 7, 8, 9})
	// a Reshape whose shape tensor is declared with a huge dim.
	f.Add([]byte{2, 4, 6, 1, 1, 1, 1, 0, 0, 3, 1, 10, 0, 0})
	// MaxPool with kernel_shape 0.
	f.Add([]byte{4, 2, 3, 7, 7, 1, 2, 0, 1, 5, 1, 2, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &gen{b: b}
		checkImport(t, g.model(), 2)
	})
}

// TestGeneratorMakesHostileModels: the generator's seeds reach the
// operators they are meant to (so the fuzz target is not blind), and
// every seed holds the bounds.
func TestGeneratorMakesHostileModels(t *testing.T) {
	ops := map[string]bool{}
	for s := range 3000 {
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte((s*131 + i*17 + s*i) % 251)
		}
		data := (&gen{b: b}).model()
		var m onnxpb.ModelProto
		if err := proto.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for _, n := range m.GetGraph().GetNode() {
			ops[n.GetOpType()] = true
		}
		checkImport(t, data, s)
	}
	for _, op := range genOps {
		if !ops[op] {
			t.Errorf("no model has a %s node", op)
		}
	}
}
