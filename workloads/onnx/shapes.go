package onnx

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// elementwise operators: the output has the (broadcast) shape of the
// inputs.
var elementwise = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Max": true,
	"Min": true, "Sum": true, "Mean": true, "Mod": true, "Where": true, "Equal": true,
	"Greater": true, "GreaterOrEqual": true, "Less": true, "LessOrEqual": true,
	"And": true, "Or": true, "Xor": true, "PRelu": true, "BitShift": true,
}

// unary operators: the output has the shape of the first input.
var unary = map[string]bool{
	"Identity": true, "Cast": true, "CastLike": true, "Relu": true, "Sigmoid": true,
	"Tanh": true, "Erf": true, "Sqrt": true, "Exp": true, "Log": true, "Neg": true,
	"Abs": true, "Reciprocal": true, "Gelu": true, "Clip": true, "LeakyRelu": true,
	"Elu": true, "Selu": true, "Celu": true, "HardSigmoid": true, "HardSwish": true,
	"Softplus": true, "Softsign": true, "Mish": true, "Softmax": true,
	"LogSoftmax": true, "Hardmax": true, "LayerNormalization": true,
	"BatchNormalization": true, "InstanceNormalization": true,
	"GroupNormalization": true, "LpNormalization": true, "Dropout": true,
	"Not": true, "Floor": true, "Ceil": true, "Round": true, "Sign": true,
	"IsNaN": true, "IsInf": true, "Sin": true, "Cos": true, "ThresholdedRelu": true,
	"Shrink": true, "LRN": true, "QuantizeLinear": true, "DequantizeLinear": true,
}

func attr(n *onnxpb.NodeProto, name string) *onnxpb.AttributeProto {
	for _, a := range n.GetAttribute() {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

func attrInt(n *onnxpb.NodeProto, name string, def int64) int64 {
	if a := attr(n, name); a != nil {
		return a.GetI()
	}
	return def
}

func attrInts(n *onnxpb.NodeProto, name string) []int64 {
	if a := attr(n, name); a != nil {
		return a.GetInts()
	}
	return nil
}

// tensorInts is the content of an integer tensor, or nil when it is not
// an integer tensor, too large to fold or inconsistent with its dims.
func tensorInts(t *onnxpb.TensorProto, shape []int64) []int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
		if n > maxValues {
			return nil
		}
	}
	var out []int64
	switch onnxpb.TensorProto_DataType(t.GetDataType()) {
	case onnxpb.TensorProto_INT64:
		if raw := t.GetRawData(); raw != nil {
			if int64(len(raw)) != 8*n {
				return nil
			}
			for i := range n {
				out = append(out, int64(binary.LittleEndian.Uint64(raw[8*i:])))
			}
		} else {
			out = slices.Clone(t.GetInt64Data())
		}
	case onnxpb.TensorProto_INT32:
		if raw := t.GetRawData(); raw != nil {
			if int64(len(raw)) != 4*n {
				return nil
			}
			for i := range n {
				out = append(out, int64(int32(binary.LittleEndian.Uint32(raw[4*i:]))))
			}
		} else {
			for _, x := range t.GetInt32Data() {
				out = append(out, int64(x))
			}
		}
	default:
		return nil
	}
	if int64(len(out)) != n {
		return nil
	}
	if out == nil {
		out = []int64{}
	}
	return out
}

// axis normalises a possibly negative axis for a rank, ok false when out
// of range.
func axis(a int64, rank int) (int, bool) {
	if a < 0 {
		a += int64(rank)
	}
	return int(a), a >= 0 && a < int64(rank)
}

// broadcast is the numpy broadcast of shapes (nil when a rank is unknown
// or the shapes do not broadcast).
func broadcast(shapes ...[]int64) []int64 {
	rank := 0
	for _, s := range shapes {
		if s == nil {
			return nil
		}
		rank = max(rank, len(s))
	}
	out := make([]int64, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == 1:
			case *o == 1:
				*o = d
			case d == unk || *o == unk:
				*o = unk
			case d != *o:
				return nil
			}
		}
	}
	return out
}

func numel(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		if d == unk || d < 0 {
			return unk
		}
		if d != 0 && n > (1<<62)/d {
			return unk
		}
		n *= d
	}
	return n
}

// intsOf is an input's folded integer content (nil if not known).
func (g *graph) intsOf(n *onnxpb.NodeProto, i int) []int64 {
	if v := g.in(n, i); v != nil {
		return v.ints
	}
	return nil
}

func shapeOf(v *value) []int64 {
	if v == nil {
		return nil
	}
	return v.shape
}

// infer computes a node's output values; an operator it does not model
// is an *unknownOp error; a GEMM whose operands are not known is an
// error naming the node.
func (g *graph) infer(n *onnxpb.NodeProto) ([]*value, error) {
	op := n.GetOpType()
	if d := n.GetDomain(); d != "" && d != "ai.onnx" {
		return nil, &unknownOp{fmt.Sprintf("operator of domain %q", d)}
	}
	x := g.in(n, 0)
	switch {
	case op == "Conv":
		return g.conv(n)
	case op == "Gemm":
		return g.gemm(n)
	case op == "MatMul":
		return g.matmul(n)
	case unary[op]:
		out := &value{shape: slices.Clone(shapeOf(x))}
		if (op == "Identity" || op == "Cast") && x != nil {
			out.ints, out.init = x.ints, x.init
		}
		if op == "Neg" && x != nil && x.ints != nil {
			out.ints = mapInts(x.ints, func(a int64) int64 { return -a })
		}
		return []*value{out}, nil
	case elementwise[op]:
		return g.elementwise(n), nil
	}
	switch op {
	case "Constant":
		return constant(n)
	case "ConstantOfShape":
		s := g.intsOf(n, 0)
		if s == nil {
			return []*value{{}}, nil
		}
		return []*value{{shape: slices.Clone(s)}}, nil
	case "Shape":
		return shapeOp(n, x), nil
	case "Size":
		out := &value{shape: []int64{}}
		if x != nil && x.known() {
			out.ints = []int64{numel(x.shape)}
		}
		return []*value{out}, nil
	case "Gather":
		return g.gather(n), nil
	case "Unsqueeze":
		return g.unsqueeze(n)
	case "Squeeze":
		return g.squeeze(n), nil
	case "Concat":
		return g.concat(n), nil
	case "Split":
		return g.split(n), nil
	case "Slice":
		return g.slice(n), nil
	case "Reshape":
		return g.reshape(n)
	case "Flatten":
		return flatten(n, x), nil
	case "Transpose":
		return transpose(n, x), nil
	case "Expand":
		s := g.intsOf(n, 1)
		if s == nil || x == nil {
			return []*value{{}}, nil
		}
		return []*value{{shape: broadcast(x.shape, s)}}, nil
	case "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
		"ReduceL2", "ReduceL1", "ReduceSumSquare", "ReduceLogSumExp", "ArgMax", "ArgMin":
		return g.reduce(n, x), nil
	case "MaxPool", "AveragePool", "LpPool":
		return pool(n, x)
	case "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool":
		s := slices.Clone(shapeOf(x))
		for i := 2; i < len(s); i++ {
			s[i] = 1
		}
		return []*value{{shape: s}}, nil
	}
	return nil, &unknownOp{"an operator the importer does not know"}
}

func mapInts(a []int64, f func(int64) int64) []int64 {
	out := make([]int64, len(a))
	for i, x := range a {
		out[i] = f(x)
	}
	return out
}

func constant(n *onnxpb.NodeProto) ([]*value, error) {
	if a := attr(n, "value"); a != nil && a.GetT() != nil {
		t := a.GetT()
		shape, err := tensorDims(t.GetDims())
		if err != nil {
			return nil, err
		}
		return []*value{{shape: shape, ints: tensorInts(t, shape), init: t}}, nil
	}
	if a := attr(n, "value_int"); a != nil {
		return []*value{{shape: []int64{}, ints: []int64{a.GetI()}}}, nil
	}
	if a := attr(n, "value_ints"); a != nil {
		return []*value{{shape: []int64{int64(len(a.GetInts()))}, ints: slices.Clone(a.GetInts())}}, nil
	}
	return []*value{{}}, nil
}

func shapeOp(n *onnxpb.NodeProto, x *value) []*value {
	if x == nil || x.shape == nil {
		return []*value{{shape: []int64{unk}}}
	}
	r := len(x.shape)
	start, end := attrInt(n, "start", 0), attrInt(n, "end", int64(r))
	clamp := func(a int64) int {
		if a < 0 {
			a += int64(r)
		}
		return int(min(max(a, 0), int64(r)))
	}
	s, e := clamp(start), clamp(end)
	dims := slices.Clone(x.shape[s:max(s, e)])
	out := &value{shape: []int64{int64(len(dims))}}
	if !slices.Contains(dims, unk) {
		out.ints = dims
	}
	return []*value{out}
}

func (g *graph) elementwise(n *onnxpb.NodeProto) []*value {
	var shapes [][]int64
	for i := range n.GetInput() {
		shapes = append(shapes, shapeOf(g.in(n, i)))
	}
	out := &value{shape: broadcast(shapes...)}
	a, b := g.intsOf(n, 0), g.intsOf(n, 1)
	if len(n.GetInput()) == 2 && a != nil && b != nil && out.shape != nil && len(out.shape) <= 1 &&
		(len(a) == len(b) || len(a) == 1 || len(b) == 1) {
		f := map[string]func(x, y int64) (int64, bool){
			"Add": func(x, y int64) (int64, bool) { return x + y, true },
			"Sub": func(x, y int64) (int64, bool) { return x - y, true },
			"Mul": func(x, y int64) (int64, bool) { return x * y, true },
			"Div": func(x, y int64) (int64, bool) { return floorDiv(x, y) },
			"Equal": func(x, y int64) (int64, bool) {
				if x == y {
					return 1, true
				}
				return 0, true
			},
		}[n.GetOpType()]
		if f != nil {
			out.ints = zipInts(a, b, f)
		}
	}
	if n.GetOpType() == "Where" && len(n.GetInput()) == 3 {
		c, y := g.intsOf(n, 0), g.intsOf(n, 2)
		x := g.intsOf(n, 1)
		if c != nil && x != nil && y != nil && len(c) == len(x) && len(x) == len(y) {
			out.ints = make([]int64, len(c))
			for i := range c {
				out.ints[i] = y[i]
				if c[i] != 0 {
					out.ints[i] = x[i]
				}
			}
		}
	}
	return []*value{out}
}

func floorDiv(x, y int64) (int64, bool) {
	if y == 0 {
		return 0, false
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	return q, true
}

// zipInts applies f element by element, broadcasting a single value.
func zipInts(a, b []int64, f func(x, y int64) (int64, bool)) []int64 {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := range n {
		x, y := a[min(i, len(a)-1)], b[min(i, len(b)-1)]
		r, ok := f(x, y)
		if !ok {
			return nil
		}
		out[i] = r
	}
	return out
}

func (g *graph) gather(n *onnxpb.NodeProto) []*value {
	data, idx := g.in(n, 0), g.in(n, 1)
	if data == nil || idx == nil || data.shape == nil || idx.shape == nil {
		return []*value{{}}
	}
	ax, ok := axis(attrInt(n, "axis", 0), len(data.shape))
	if !ok {
		return []*value{{}}
	}
	shape := cat(data.shape[:ax], idx.shape, data.shape[ax+1:])
	out := &value{shape: shape}
	if len(data.shape) == 1 && data.ints != nil && idx.ints != nil {
		for _, i := range idx.ints {
			if i < 0 {
				i += int64(len(data.ints))
			}
			if i < 0 || i >= int64(len(data.ints)) {
				return []*value{out}
			}
			out.ints = append(out.ints, data.ints[i])
		}
	}
	return []*value{out}
}

// axesOf is a node's axes: the input at index i (opset 13+) or the
// "axes" attribute; ok false when an input names them but they are not
// known.
func (g *graph) axesOf(n *onnxpb.NodeProto, i int) ([]int64, bool) {
	if v := g.in(n, i); v != nil {
		return v.ints, v.ints != nil
	}
	return attrInts(n, "axes"), true
}

func (g *graph) unsqueeze(n *onnxpb.NodeProto) ([]*value, error) {
	x := g.in(n, 0)
	axes, ok := g.axesOf(n, 1)
	if x == nil || x.shape == nil || !ok {
		return []*value{{}}, nil
	}
	rank := len(x.shape) + len(axes)
	if rank > MaxRank {
		return nil, rankError("the output", int64(rank))
	}
	mark := make([]bool, rank)
	for _, a := range axes {
		ax, ok := axis(a, rank)
		if !ok {
			return []*value{{}}, nil
		}
		mark[ax] = true
	}
	var shape []int64
	j := 0
	for i := range rank {
		if mark[i] {
			shape = append(shape, 1)
		} else if j < len(x.shape) {
			shape = append(shape, x.shape[j])
			j++
		}
	}
	return []*value{{shape: shape, ints: x.ints}}, nil
}

func (g *graph) squeeze(n *onnxpb.NodeProto) []*value {
	x := g.in(n, 0)
	axes, ok := g.axesOf(n, 1)
	if x == nil || x.shape == nil || !ok {
		return []*value{{}}
	}
	drop := map[int]bool{}
	for _, a := range axes {
		if ax, ok := axis(a, len(x.shape)); ok {
			drop[ax] = true
		}
	}
	var shape []int64
	for i, d := range x.shape {
		if (len(axes) == 0 && d == 1) || drop[i] {
			continue
		}
		shape = append(shape, d)
	}
	if shape == nil {
		shape = []int64{}
	}
	return []*value{{shape: shape, ints: x.ints}}
}

func (g *graph) concat(n *onnxpb.NodeProto) []*value {
	var shape []int64
	var ints []int64
	foldable := true
	for i := range n.GetInput() {
		v := g.in(n, i)
		if v == nil || v.shape == nil {
			return []*value{{}}
		}
		if v.ints == nil || len(ints)+len(v.ints) > maxValues {
			foldable = false
		}
		if foldable {
			ints = append(ints, v.ints...)
		}
		ax, ok := axis(attrInt(n, "axis", 0), len(v.shape))
		if !ok {
			return []*value{{}}
		}
		if shape == nil {
			shape = slices.Clone(v.shape)
			continue
		}
		if len(v.shape) != len(shape) {
			return []*value{{}}
		}
		if shape[ax] == unk || v.shape[ax] == unk {
			shape[ax] = unk
		} else {
			shape[ax] += v.shape[ax]
		}
	}
	out := &value{shape: shape}
	if foldable && len(shape) == 1 {
		out.ints = ints
	}
	return []*value{out}
}

func (g *graph) split(n *onnxpb.NodeProto) []*value {
	x := g.in(n, 0)
	outs := make([]*value, len(n.GetOutput()))
	for i := range outs {
		outs[i] = &value{}
	}
	if x == nil || x.shape == nil {
		return outs
	}
	ax, ok := axis(attrInt(n, "axis", 0), len(x.shape))
	if !ok {
		return outs
	}
	sizes := attrInts(n, "split")
	if v := g.in(n, 1); v != nil {
		sizes = v.ints
	}
	if sizes == nil {
		d := x.shape[ax]
		k := int64(len(outs))
		if d == unk || k == 0 {
			return outs
		}
		for i := range k {
			sizes = append(sizes, (d+k-1)/k)
			if i == k-1 {
				sizes[i] = d - (k-1)*((d+k-1)/k)
			}
		}
	}
	if len(sizes) != len(outs) {
		return outs
	}
	for i, s := range sizes {
		shape := slices.Clone(x.shape)
		shape[ax] = s
		outs[i] = &value{shape: shape}
	}
	return outs
}

func flatten(n *onnxpb.NodeProto, x *value) []*value {
	if x == nil || x.shape == nil {
		return []*value{{shape: unknownDims(2)}}
	}
	a := attrInt(n, "axis", 1)
	if a < 0 {
		a += int64(len(x.shape))
	}
	if a < 0 || a > int64(len(x.shape)) {
		return []*value{{}}
	}
	return []*value{{shape: []int64{numel(x.shape[:a]), numel(x.shape[a:])}}}
}

func transpose(n *onnxpb.NodeProto, x *value) []*value {
	if x == nil || x.shape == nil {
		return []*value{{}}
	}
	perm := attrInts(n, "perm")
	r := len(x.shape)
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return []*value{{}}
	}
	shape := make([]int64, r)
	for i, p := range perm {
		ax, ok := axis(p, r)
		if !ok {
			return []*value{{}}
		}
		shape[i] = x.shape[ax]
	}
	return []*value{{shape: shape}}
}

func (g *graph) reduce(n *onnxpb.NodeProto, x *value) []*value {
	if x == nil || x.shape == nil {
		return []*value{{}}
	}
	keep := attrInt(n, "keepdims", 1) != 0
	var axes []int64
	if a := attr(n, "axis"); a != nil { // ArgMax/ArgMin
		axes = []int64{a.GetI()}
	} else if n.GetOpType() == "ArgMax" || n.GetOpType() == "ArgMin" {
		axes = []int64{0}
	} else {
		var ok bool
		if axes, ok = g.axesOf(n, 1); !ok {
			return []*value{{}}
		}
	}
	drop := map[int]bool{}
	for _, a := range axes {
		if ax, ok := axis(a, len(x.shape)); ok {
			drop[ax] = true
		}
	}
	var shape []int64
	for i, d := range x.shape {
		if len(axes) == 0 || drop[i] {
			if keep {
				shape = append(shape, 1)
			}
			continue
		}
		shape = append(shape, d)
	}
	if shape == nil {
		shape = []int64{}
	}
	return []*value{{shape: shape}}
}

// cat concatenates dims; the result is never nil (nil means "rank
// unknown", a scalar's dims are []).
func cat(parts ...[]int64) []int64 {
	out := []int64{}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
