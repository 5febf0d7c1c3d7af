package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// operand is a GEMM input that must have a known shape.
func (g *graph) operand(n *onnxpb.NodeProto, i int, what string) (*value, error) {
	v := g.in(n, i)
	if v == nil {
		return nil, fmt.Errorf("%s (input %d) is missing", what, i)
	}
	if !v.known() {
		why := v.why
		if why == nil {
			why = errors.New("the importer could not work it out")
		}
		return nil, fmt.Errorf("%s %s has dims %s that stay unknown: %w", what,
			quote.Q(n.GetInput()[i]), shapeString(v.shape), why)
	}
	return v, nil
}

// conv is a convolution as the implicit GEMM of docs/workloads.md:
// M = output channels, N = batch x output pixels, K = C x kernel; a
// grouped (or depthwise) convolution is a batched GEMM of its groups.
func (g *graph) conv(n *onnxpb.NodeProto) ([]*value, error) {
	x, err := g.operand(n, 0, "data")
	if err != nil {
		return nil, err
	}
	w, err := g.operand(n, 1, "weight")
	if err != nil {
		return nil, err
	}
	if len(x.shape) < 3 || len(w.shape) != len(x.shape) {
		return nil, fmt.Errorf("data %s and weight %s: want [N C spatial...] and [M C/group kernel...] of one rank",
			shapeString(x.shape), shapeString(w.shape))
	}
	group := attrInt(n, "group", 1)
	c, out := x.shape[1], w.shape[0]
	if group < 1 || c%group != 0 || out%group != 0 || w.shape[1] != c/group {
		return nil, fmt.Errorf("group %d does not fit data channels %d and weight %s",
			group, c, shapeString(w.shape))
	}
	kernel := w.shape[2:]
	if ks := attrInts(n, "kernel_shape"); ks != nil && !slices.Equal(ks, kernel) {
		return nil, fmt.Errorf("kernel_shape %s differs from the weight's %s", intsString(ks), intsString(kernel))
	}
	sp, err := spatial(n, x.shape[2:], kernel, false)
	if err != nil {
		return nil, err
	}
	l := workloads.ImportedLayer{M: int(out / group), N: 0, K: 0, Batch: int(group),
		Out: int(out), In: int(c / group), Prunable: w.static}
	nn, ok := product(append([]int64{x.shape[0]}, sp...))
	kk, ok2 := product(append([]int64{c / group}, kernel...))
	if !ok || !ok2 {
		return nil, fmt.Errorf("GEMM dims above the limit %d", workloads.MaxDim)
	}
	l.N, l.K = int(nn), int(kk)
	if group > 1 {
		l.Note = fmt.Sprintf("grouped convolution: %d groups as a batched GEMM", group)
		if c == group {
			l.Note = fmt.Sprintf("depthwise convolution: %d channels as a batched GEMM", group)
		}
	}
	if err := g.addLayer(n, l, g.convWeight(n, w)); err != nil {
		return nil, err
	}
	return []*value{{shape: cat([]int64{x.shape[0], out}, sp)}}, nil
}

// product multiplies dims, ok false above MaxDim.
func product(d []int64) (int64, bool) {
	p := int64(1)
	for _, x := range d {
		if x < 0 || (x > 0 && p > workloads.MaxDim/x) {
			return 0, false
		}
		p *= x
	}
	return p, p <= workloads.MaxDim
}

// gemm is ONNX Gemm: Y = alpha A' B' + beta C with A' = transA ? A^T : A.
func (g *graph) gemm(n *onnxpb.NodeProto) ([]*value, error) {
	a, err := g.operand(n, 0, "A")
	if err != nil {
		return nil, err
	}
	b, err := g.operand(n, 1, "B")
	if err != nil {
		return nil, err
	}
	if len(a.shape) != 2 || len(b.shape) != 2 {
		return nil, fmt.Errorf("A %s and B %s must be 2-D", shapeString(a.shape), shapeString(b.shape))
	}
	ta, tb := attrInt(n, "transA", 0) != 0, attrInt(n, "transB", 0) != 0
	rows, inner := a.shape[0], a.shape[1]
	if ta {
		rows, inner = inner, rows
	}
	inner2, cols := b.shape[0], b.shape[1]
	if tb {
		inner2, cols = cols, inner2
	}
	if inner != inner2 {
		return nil, fmt.Errorf("A' is %dx%d and B' %dx%d: inner dims differ", rows, inner, inner2, cols)
	}
	var w *workloads.Tensor
	if b.static && !a.static {
		// weight on the right: [out, in] is B (transB) or B^T
		w = g.linearWeight(n, 1, b, !tb)
	} else if a.static && !b.static {
		w = g.linearWeight(n, 0, a, ta)
	}
	if err := g.product(n, rows, inner, cols, 1, a.static, b.static, w); err != nil {
		return nil, err
	}
	return []*value{{shape: []int64{rows, cols}}}, nil
}

// matmul is numpy matmul with batch broadcast.
func (g *graph) matmul(n *onnxpb.NodeProto) ([]*value, error) {
	a, err := g.operand(n, 0, "A")
	if err != nil {
		return nil, err
	}
	b, err := g.operand(n, 1, "B")
	if err != nil {
		return nil, err
	}
	as, bs := a.shape, b.shape
	if len(as) == 0 || len(bs) == 0 {
		return nil, fmt.Errorf("A %s and B %s: a scalar is no matrix", shapeString(as), shapeString(bs))
	}
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	rows, inner := as[len(as)-2], as[len(as)-1]
	inner2, cols := bs[len(bs)-2], bs[len(bs)-1]
	if inner != inner2 {
		return nil, fmt.Errorf("A %s and B %s: inner dims %d and %d differ",
			shapeString(a.shape), shapeString(b.shape), inner, inner2)
	}
	batchDims := broadcast(as[:len(as)-2], bs[:len(bs)-2])
	if batchDims == nil {
		return nil, fmt.Errorf("A %s and B %s: batch dims do not broadcast",
			shapeString(a.shape), shapeString(b.shape))
	}
	outShape := cat(batchDims, []int64{rows, cols})
	if len(a.shape) == 1 {
		outShape = slices.Delete(outShape, len(outShape)-2, len(outShape)-1)
	}
	if len(b.shape) == 1 {
		outShape = outShape[:len(outShape)-1]
	}
	switch {
	case b.static && !a.static && len(b.shape) == 2:
		// X [..., t, in] x W [in, out]: leading dims fold into the tokens
		t, ok := product(append(slices.Clone(as[:len(as)-2]), rows))
		if !ok {
			return nil, fmt.Errorf("tokens above the limit %d", workloads.MaxDim)
		}
		err = g.product(n, t, inner, cols, 1, false, true, g.linearWeight(n, 1, b, true))
	case a.static && !b.static && len(a.shape) == 2:
		// W [out, in] x X [..., in, t]: the weight is A as it is
		t, ok := product(append(slices.Clone(bs[:len(bs)-2]), cols))
		if !ok {
			return nil, fmt.Errorf("tokens above the limit %d", workloads.MaxDim)
		}
		err = g.addLayer(n, workloads.ImportedLayer{M: int(rows), N: int(t), K: int(inner),
			Out: int(rows), In: int(inner), Prunable: true}, g.linearWeight(n, 0, a, false))
	default:
		bt, ok := product(batchDims)
		if !ok {
			return nil, fmt.Errorf("batch above the limit %d", workloads.MaxDim)
		}
		err = g.product(n, rows, inner, cols, bt, a.static && len(batchDims) == 0, b.static && len(batchDims) == 0, nil)
	}
	if err != nil {
		return nil, err
	}
	return []*value{{shape: outShape}}, nil
}

// product records X [rows, inner] x Y [inner, cols] (batch of them).
// With a weight on the right (Linear) or two activations it is written
// transposed, D^T = Y^T X^T: M = cols, N = rows, K = inner, so that N is
// the token dimension as in the built-in models; a weight on the left is
// already M x K.
func (g *graph) product(n *onnxpb.NodeProto, rows, inner, cols, batch int64, aStatic, bStatic bool, w *workloads.Tensor) error {
	if aStatic && bStatic {
		g.skipped = append(g.skipped, fmt.Sprintf("node %s (%s): both operands are constants "+
			"(folded by the framework), skipped", quote.Q(n.GetName()), quote.Q(n.GetOpType())))
		return nil
	}
	l := workloads.ImportedLayer{M: int(cols), N: int(rows), K: int(inner), Batch: int(batch)}
	switch {
	case bStatic:
		l.Out, l.In, l.Prunable = int(cols), int(inner), true
	case aStatic:
		l.M, l.N = int(rows), int(cols)
		l.Out, l.In, l.Prunable = int(rows), int(inner), true
	default:
		l.Note = "activations x activations, written transposed (M = columns of the second operand, N = rows of the first); dense"
	}
	return g.addLayer(n, l, w)
}

// addLayer names the layer after its node and records it.
func (g *graph) addLayer(n *onnxpb.NodeProto, l workloads.ImportedLayer, w *workloads.Tensor) error {
	for _, d := range []int{l.M, l.N, l.K, l.Batch} {
		if d < 0 || d > workloads.MaxDim {
			return fmt.Errorf("GEMM %dx%dx%d (batch %d) has a dim outside 1..%d",
				l.M, l.N, l.K, l.Batch, workloads.MaxDim)
		}
	}
	if l.M == 0 || l.N == 0 || l.K == 0 {
		g.skipped = append(g.skipped, fmt.Sprintf("node %s (%s): an empty GEMM (%dx%dx%d), skipped",
			quote.Q(n.GetName()), quote.Q(n.GetOpType()), l.M, l.N, l.K))
		return nil
	}
	name, full := layerName(n, len(g.layers))
	if g.names[name] > 0 {
		name = full
	}
	if k := g.names[name]; k > 0 {
		name = fmt.Sprintf("%s.%d", name, k)
	}
	g.names[name]++
	l.Name = name
	if w != nil {
		g.weights[len(g.layers)] = w
	}
	g.layers = append(g.layers, l)
	return nil
}

// layerName names a layer after its node. torch.onnx.export names nodes
// by module scope, "/layer1/layer1.0/conv1/Conv": the name is then the
// module path, "layer1.0.conv1" (the built-in models' names), with the
// operator's own name appended when the module holds more than one
// product ("layers.0.self_attn.MatMul_1"); full is the name with the
// operator's part always appended, for when the short one is taken.
// Other names are kept, with control characters replaced; a node without
// a name is OpType_index.
func layerName(n *onnxpb.NodeProto, index int) (name, full string) {
	name = n.GetName()
	if name == "" {
		name = fmt.Sprintf("%s_%d", n.GetOpType(), index)
		return name, name
	}
	full = name
	if strings.HasPrefix(name, "/") {
		parts := strings.Split(name[1:], "/")
		path := ""
		for _, p := range parts[:len(parts)-1] {
			// a segment repeats its parent's last name with an index
			// ("layer1" then "layer1.0"; "downsample" then "downsample.0")
			base := path[strings.LastIndex(path, ".")+1:]
			switch {
			case path == "":
				path = p
			case strings.HasPrefix(p, base+"."):
				path += p[len(base):]
			default:
				path += "." + p
			}
		}
		last := parts[len(parts)-1]
		full = path + "." + last
		switch {
		case path == "":
			name, full = last, last
		case last == n.GetOpType() || last == "":
			name = path
		default:
			name = full
		}
	}
	return clean(name, n, index), clean(full, n, index)
}

// clean makes a name a valid row name: control characters replaced, no
// leading '#', at most 200 bytes.
func clean(name string, n *onnxpb.NodeProto, index int) string {
	name = strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, name), "?")
	name = strings.TrimLeft(name, "#")
	if name == "" {
		return fmt.Sprintf("%s_%d", n.GetOpType(), index)
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}

// source follows Identity nodes back to the initializer (nil if none).
func (g *graph) source(v *value) *onnxpb.TensorProto {
	if v == nil {
		return nil
	}
	return v.init
}

// floats decodes a float initializer's data (nil when it has none or is
// not float32, float16, bfloat16 or float64).
func floats(t *onnxpb.TensorProto, n int64) []float32 {
	if t == nil || n <= 0 || n > workloads.MaxTensorElements {
		return nil
	}
	raw := t.GetRawData()
	dt := onnxpb.TensorProto_DataType(t.GetDataType())
	// the data's length is checked before anything is allocated
	width := map[onnxpb.TensorProto_DataType]int64{onnxpb.TensorProto_FLOAT: 4,
		onnxpb.TensorProto_DOUBLE: 8, onnxpb.TensorProto_FLOAT16: 2, onnxpb.TensorProto_BFLOAT16: 2}[dt]
	if width == 0 {
		return nil
	}
	if raw != nil {
		if int64(len(raw)) != width*n {
			return nil
		}
	} else {
		have := map[onnxpb.TensorProto_DataType]int{onnxpb.TensorProto_FLOAT: len(t.GetFloatData()),
			onnxpb.TensorProto_DOUBLE: len(t.GetDoubleData()), onnxpb.TensorProto_FLOAT16: len(t.GetInt32Data()),
			onnxpb.TensorProto_BFLOAT16: len(t.GetInt32Data())}[dt]
		if int64(have) != n {
			return nil
		}
	}
	out := make([]float32, 0, n)
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		if raw == nil {
			return slices.Clone(t.GetFloatData())
		}
		for i := range n {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		}
	case onnxpb.TensorProto_DOUBLE:
		if raw == nil {
			for _, x := range t.GetDoubleData() {
				out = append(out, float32(x))
			}
			return out
		}
		for i := range n {
			out = append(out, float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))))
		}
	default: // float16, bfloat16
		bf := dt == onnxpb.TensorProto_BFLOAT16
		half := func(h uint16) float32 {
			if bf {
				return math.Float32frombits(uint32(h) << 16)
			}
			return tensorfile.Float16ToFloat32(h)
		}
		if raw == nil { // int32_data holds the 16-bit values
			for _, x := range t.GetInt32Data() {
				out = append(out, half(uint16(x)))
			}
			return out
		}
		for i := range n {
			out = append(out, half(binary.LittleEndian.Uint16(raw[2*i:])))
		}
	}
	return out
}

// linearWeight is a Linear weight's data as [out, in]; transposed: the
// initializer holds [in, out] (MatMul's right operand, Gemm's B without
// transB).
func (g *graph) linearWeight(n *onnxpb.NodeProto, i int, v *value, transposed bool) *workloads.Tensor {
	t := g.source(v)
	if t == nil || len(v.shape) != 2 {
		return nil
	}
	r, c := v.shape[0], v.shape[1]
	data := floats(t, r*c)
	if data == nil {
		return nil
	}
	if transposed {
		tr := make([]float32, len(data))
		for a := range r {
			for b := range c {
				tr[b*r+a] = data[a*c+b]
			}
		}
		data, r, c = tr, c, r
	}
	return &workloads.Tensor{Name: n.GetInput()[i], DType: "<f4", Shape: []int{int(r), int(c)}, Data: data}
}

// convWeight is a Conv weight's data in its own [out, C/group, kernel...]
// layout (the weights column reads 4-D [out, C, R, S] so); nil for
// grouped or non-2-D convolutions, whose weight is not one M x K matrix.
func (g *graph) convWeight(n *onnxpb.NodeProto, w *value) *workloads.Tensor {
	t := g.source(w)
	if t == nil || len(w.shape) != 4 || attrInt(n, "group", 1) != 1 {
		return nil
	}
	data := floats(t, numel(w.shape))
	if data == nil {
		return nil
	}
	shape := make([]int, 4)
	for i, d := range w.shape {
		shape[i] = int(d)
	}
	return &workloads.Tensor{Name: n.GetInput()[1], DType: "<f4", Shape: shape, Data: data}
}
