// Package onnx imports an ONNX graph (torch.onnx.export or any other
// exporter) as GEMM layers in the orientation of the built-in models
// (docs/workloads.md, "Bring your own model"): it decodes the protobuf
// with the Go types generated from ONNX's onnx.proto (package onnxpb),
// propagates shapes through the graph, and turns every Conv, Gemm and
// MatMul into a layer named after its node.
package onnx

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// Importer names this importer and its version in a trace's provenance;
// the version rises whenever the same file would import differently.
const Importer = "stcsim-onnx 1"

// MaxModelBytes bounds an ONNX file: 1 GiB holds the graph and float32
// weights of a 250M-parameter model (external data files are not read).
const MaxModelBytes = 1 << 30

// maxValues bounds the integer tensors whose values the importer folds
// (shape arithmetic: Shape, Gather, Concat, ... feeding a Reshape).
const maxValues = 1 << 16

// Input gives the dims of one graph input (--input NAME=DIMS).
type Input struct {
	Name string
	Dims []int64
}

// The fields of Options that errors name (package field): a command
// spells them as its flags.
const (
	FieldBatch  field.Name = "batch"
	FieldInputs field.Name = "inputs"
)

// Options steer an import.
type Options struct {
	// Batch, when > 0, sets the first dim of every activation input whose
	// first dim is symbolic (dim_param) or missing.
	Batch int
	// Inputs set the full dims of the named graph inputs; a symbolic dim
	// they set takes the same value in every input that names it.
	Inputs []Input
}

// Result is an imported graph.
type Result struct {
	Layers []workloads.ImportedLayer
	// Weights are the initializer data of the layers' weight operands,
	// by index into Layers, in the [out, in] (Linear) or [out, C, R, S]
	// (Conv) layout of the weights column; only for initializers with
	// data (export_params=True).
	Weights map[int]*workloads.Tensor
	// Inputs are the activation inputs' dims as used (NAME=DIMS).
	Inputs []string
	// Skipped says which nodes were left out and why.
	Skipped []string
}

// Import reads the ONNX model in data (file names it in messages).
func Import(data []byte, file string, o Options) (*Result, error) {
	if len(data) > MaxModelBytes {
		return nil, fmt.Errorf("%s: %d bytes is above the limit of %d MiB for an ONNX model",
			file, len(data), MaxModelBytes>>20)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not an ONNX model (the protobuf does not decode: %v; "+
			"a truncated file reads so too)", file, shortErr(err))
	}
	if v := m.GetIrVersion(); v < 1 || v > 100 || m.GetGraph() == nil || len(m.GetGraph().GetNode()) == 0 {
		return nil, fmt.Errorf("%s: not an ONNX model (ir_version %d, %d graph nodes: "+
			"want an ir_version in 1..100 and a graph with nodes)", file, v, len(m.GetGraph().GetNode()))
	}
	g := &graph{file: file, opts: o, values: map[string]*value{},
		names: map[string]int{}, weights: map[int]*workloads.Tensor{}}
	if err := g.run(m.GetGraph()); err != nil {
		return nil, err
	}
	if len(g.layers) == 0 {
		return nil, fmt.Errorf("%s: no Conv, Gemm or MatMul node: nothing to simulate", file)
	}
	return &Result{Layers: g.layers, Weights: g.weights, Inputs: g.inputs, Skipped: g.skipped}, nil
}

// shortErr bounds a decoder message (which may quote input bytes).
func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

// unk is a dim or a folded value that is not known.
const unk = math.MinInt64

// value is what the importer knows of one tensor of the graph.
type value struct {
	shape []int64 // nil: rank unknown; unk entries: dim unknown
	// static: computed from initializers, parameters and constants only
	// (a weight operand when it feeds a GEMM).
	static bool
	ints   []int64 // folded integer content (row-major), nil if unknown
	init   *onnxpb.TensorProto
	// why says where an unknown shape comes from, for messages (nil
	// when the shape is known or nothing is known of why).
	why error
}

func (v *value) known() bool {
	if v.shape == nil {
		return false
	}
	return !slices.Contains(v.shape, unk)
}

type graph struct {
	file    string
	opts    Options
	values  map[string]*value
	layers  []workloads.ImportedLayer
	weights map[int]*workloads.Tensor
	names   map[string]int // layer name -> uses, for unique names
	inputs  []string
	skipped []string
}

// nodeError is an error at one node.
func (g *graph) nodeError(n *onnxpb.NodeProto, format string, a ...any) error {
	return fmt.Errorf("%s: node %s (%s): %w", g.file, quote.Q(n.GetName()),
		quote.Q(n.GetOpType()), fmt.Errorf(format, a...))
}

func (g *graph) run(gp *onnxpb.GraphProto) error {
	if err := g.addInitializers(gp); err != nil {
		return err
	}
	if err := g.addInputs(gp); err != nil {
		return err
	}
	order, err := g.order(gp)
	if err != nil {
		return err
	}
	hints := map[string]*onnxpb.ValueInfoProto{}
	for _, vi := range gp.GetValueInfo() {
		hints[vi.GetName()] = vi
	}
	for _, vi := range gp.GetOutput() {
		hints[vi.GetName()] = vi
	}
	for _, n := range order {
		if err := g.node(n, hints); err != nil {
			return err
		}
	}
	return nil
}

func (g *graph) addInitializers(gp *onnxpb.GraphProto) error {
	for _, t := range gp.GetInitializer() {
		shape, err := tensorDims(t.GetDims())
		if err != nil {
			return fmt.Errorf("%s: initializer %s: %v", g.file, quote.Q(t.GetName()), err)
		}
		g.values[t.GetName()] = &value{shape: shape, static: true,
			ints: tensorInts(t, shape), init: t}
	}
	return nil
}

// tensorDims checks a tensor's dims.
func tensorDims(d []int64) ([]int64, error) {
	if len(d) > MaxRank {
		return nil, rankError("the tensor", int64(len(d)))
	}
	for _, x := range d {
		if x < 0 || x > workloads.MaxDim {
			return nil, fmt.Errorf("dim %d is outside 0..%d", x, workloads.MaxDim)
		}
	}
	return append([]int64{}, d...), nil // a scalar has dims [], not nil (unknown)
}

// isParameter tells whether a graph input that is not an initializer is
// a parameter: torch.onnx.export with export_params=False lists the
// parameters as graph inputs without data, named after the module's
// state dict ("fc.weight", "layers.0.linear1.bias") or "onnx::Op_N" for
// tensors it made (a convolution with its batch norm folded in, a
// transposed Linear weight); the model's own inputs are named by
// input_names (default "input.1"-like names are not used by it for
// inputs, but an input named on --input is always an activation).
func (g *graph) isParameter(name string) bool {
	for _, in := range g.opts.Inputs {
		if in.Name == name {
			return false
		}
	}
	if strings.HasPrefix(name, "onnx::") {
		return true
	}
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return false
	}
	last := name[i+1:]
	return strings.Contains(last, "weight") || strings.Contains(last, "bias") ||
		strings.HasPrefix(last, "running_") || last == "num_batches_tracked"
}

func (g *graph) addInputs(gp *onnxpb.GraphProto) error {
	symbols := map[string]int64{}
	given := map[string]bool{}
	for _, in := range g.opts.Inputs {
		given[in.Name] = true
	}
	infos := map[string]*onnxpb.ValueInfoProto{}
	for _, vi := range gp.GetInput() {
		infos[vi.GetName()] = vi
	}
	for _, in := range g.opts.Inputs {
		vi := infos[in.Name]
		if vi == nil || g.values[in.Name] != nil {
			var names []string
			for _, vi := range gp.GetInput() {
				if g.values[vi.GetName()] == nil && !g.isParameter(vi.GetName()) {
					names = append(names, quote.Q(vi.GetName()))
				}
			}
			return fmt.Errorf("%s: %w", g.file, &field.Error{Field: FieldInputs, Value: quote.Q(in.Name),
				Err: fmt.Errorf("no such graph input (inputs: %s)", strings.Join(names[:min(len(names), 8)], ", "))})
		}
		dims := vi.GetType().GetTensorType().GetShape().GetDim()
		if len(dims) != 0 && len(dims) != len(in.Dims) {
			return fmt.Errorf("%s: %w", g.file, &field.Error{Field: FieldInputs, Value: quote.Q(in.Name),
				Err: fmt.Errorf("%d dims given, the input has %d", len(in.Dims), len(dims))})
		}
		for i, d := range dims {
			if p := d.GetDimParam(); p != "" {
				symbols[p] = in.Dims[i]
			}
		}
	}
	activations := 0
	for _, vi := range gp.GetInput() {
		name := vi.GetName()
		if g.values[name] != nil {
			continue // an initializer listed as an input (IR < 4)
		}
		param := g.isParameter(name)
		v := &value{static: param}
		if tt := vi.GetType().GetTensorType(); tt != nil && tt.GetShape() != nil {
			if r := len(tt.GetShape().GetDim()); r > MaxRank {
				return fmt.Errorf("%s: graph input %s: %v", g.file, quote.Q(name), rankError("it", int64(r)))
			}
			v.shape = make([]int64, len(tt.GetShape().GetDim()))
			for i, d := range tt.GetShape().GetDim() {
				v.shape[i] = unk
				if d.GetValue() != nil && !isParam(d) {
					v.shape[i] = d.GetDimValue()
				} else if s, ok := symbols[d.GetDimParam()]; ok {
					v.shape[i] = s
				} else if i == 0 && !param && g.opts.Batch > 0 {
					v.shape[i] = int64(g.opts.Batch)
				}
			}
		}
		for _, in := range g.opts.Inputs {
			if in.Name == name {
				if err := g.checkGiven(v.shape, in); err != nil {
					return err
				}
				v.shape = slices.Clone(in.Dims)
			}
		}
		for _, d := range v.shape {
			if d != unk && (d < 0 || d > workloads.MaxDim) {
				return fmt.Errorf("%s: graph input %s: dim %d is outside 0..%d",
					g.file, quote.Q(name), d, workloads.MaxDim)
			}
		}
		if !v.known() {
			v.why = field.Errorf("graph input %s has dims %s: set them with %s %s=DIMS (or %s N for a symbolic first dim)",
				quote.Q(name), dimString(vi), FieldInputs, strings.Trim(quote.Q(name), `"`), FieldBatch)
		}
		g.values[name] = v
		if !param {
			activations++
			g.inputs = append(g.inputs, name+"="+shapeText(v.shape, MaxRank))
		}
	}
	if activations == 0 {
		return field.Errorf("%s: every graph input looks like a parameter (named like "+
			"\"fc.weight\" or \"onnx::...\"): name the model's input with %s NAME=DIMS", g.file, FieldInputs)
	}
	return nil
}

// checkGiven refuses --input dims that contradict a fixed dim.
func (g *graph) checkGiven(shape []int64, in Input) error {
	for i, d := range shape {
		if d != unk && d != in.Dims[i] {
			return fmt.Errorf("%s: %w", g.file, &field.Error{Field: FieldInputs, Value: quote.Q(in.Name),
				Err: fmt.Errorf("dim %d is %d in the model, %d given (only symbolic dims can be set)",
					i, d, in.Dims[i])})
		}
	}
	return nil
}

func isParam(d *onnxpb.TensorShapeProto_Dimension) bool {
	_, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimParam)
	return ok
}

func dimString(vi *onnxpb.ValueInfoProto) string {
	var parts []string
	for _, d := range vi.GetType().GetTensorType().GetShape().GetDim() {
		switch {
		case d.GetDimParam() != "":
			parts = append(parts, quote.Q(d.GetDimParam()))
		case d.GetValue() != nil:
			parts = append(parts, fmt.Sprint(d.GetDimValue()))
		default:
			parts = append(parts, "?")
		}
	}
	if len(parts) > 8 {
		parts = append(parts[:8], "...")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// shapeString prints a shape for a message: at most 8 dims of it (with
// the rank when cut), so that the message stays bounded.
func shapeString(s []int64) string { return shapeText(s, 8) }

// shapeText prints at most limit dims of a shape ("?" for an unknown
// dim or rank).
func shapeText(s []int64, limit int) string {
	if s == nil {
		return "?"
	}
	parts := make([]string, 0, min(len(s), limit)+1)
	for i, d := range s {
		if i == limit {
			parts = append(parts, fmt.Sprintf("...(rank %d)", len(s)))
			break
		}
		p := "?"
		if d != unk {
			p = fmt.Sprint(d)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "x")
}

// order sorts the nodes so that every node comes after the producers of
// its inputs (ONNX requires the file's order to be so; this also accepts
// files that are not), and finds cycles and inputs that nothing makes.
func (g *graph) order(gp *onnxpb.GraphProto) ([]*onnxpb.NodeProto, error) {
	nodes := gp.GetNode()
	producer := map[string]int{}
	for i, n := range nodes {
		for _, out := range n.GetOutput() {
			if out == "" {
				continue
			}
			if j, dup := producer[out]; dup || g.values[out] != nil {
				what := "a graph input or initializer"
				if dup {
					what = "node " + quote.Q(nodes[j].GetName())
				}
				return nil, g.nodeError(n, "output %s is also made by %s", quote.Q(out), what)
			}
			producer[out] = i
		}
	}
	pending := make([]int, len(nodes))
	users := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, in := range n.GetInput() {
			if in == "" || g.values[in] != nil {
				continue
			}
			j, ok := producer[in]
			if !ok {
				return nil, g.nodeError(n, "input %s is no graph input, initializer or node output", quote.Q(in))
			}
			pending[i]++
			users[j] = append(users[j], i)
		}
	}
	// Kahn's algorithm taking the lowest-index ready node first, so that a
	// file already in order (as ONNX requires) keeps its order.
	ready := &intHeap{}
	for i := range nodes {
		if pending[i] == 0 {
			heap.Push(ready, i)
		}
	}
	var out []int
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		out = append(out, i)
		for _, u := range users[i] {
			if pending[u]--; pending[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	if len(out) < len(nodes) {
		for i, p := range pending {
			if p > 0 {
				return nil, g.nodeError(nodes[i], "the graph has a cycle through this node "+
					"(%d of %d nodes are on or after a cycle)", len(nodes)-len(out), len(nodes))
			}
		}
	}
	sorted := make([]*onnxpb.NodeProto, len(out))
	for k, i := range out {
		sorted[k] = nodes[i]
	}
	return sorted, nil
}

// in is the value of a node's input i (nil when absent).
func (g *graph) in(n *onnxpb.NodeProto, i int) *value {
	if i >= len(n.GetInput()) || n.GetInput()[i] == "" {
		return nil
	}
	return g.values[n.GetInput()[i]]
}

// node infers the outputs of one node and records its GEMM, if any.
func (g *graph) node(n *onnxpb.NodeProto, hints map[string]*onnxpb.ValueInfoProto) error {
	static := true
	var inherited error // why an input's shape is unknown, for the outputs
	for i := range n.GetInput() {
		v := g.in(n, i)
		if v != nil && !v.static {
			static = false
		}
		if v != nil && !v.known() && inherited == nil {
			inherited = v.why
		}
	}
	outs, err := g.infer(n)
	var unknown *unknownOp
	if errors.As(err, &unknown) {
		outs = g.fromHints(n, hints)
		how := "its outputs' shapes are unknown (a GEMM that needs them is an error)"
		if outs != nil {
			how = "its outputs' shapes taken from the file's value_info"
		}
		g.skipped = append(g.skipped, fmt.Sprintf("node %s (%s): %s, skipped; %s",
			quote.Q(n.GetName()), quote.Q(n.GetOpType()), unknown.why, how))
		err = nil
	}
	if err != nil {
		return g.nodeError(n, "%w", err)
	}
	for i, name := range n.GetOutput() {
		if name == "" {
			continue
		}
		v := &value{static: static}
		if i < len(outs) && outs[i] != nil {
			v = outs[i]
			v.static = static
		}
		if v.ints != nil && (!v.known() || numel(v.shape) != int64(len(v.ints))) {
			v.ints = nil // folded values must fill the shape (a malformed Reshape may not)
		}
		if len(v.shape) > MaxRank {
			return g.nodeError(n, "output %s: %v", quote.Q(name), rankError("it", int64(len(v.shape))))
		}
		if !v.known() && v.why == nil && inherited != nil {
			v.why = inherited
		}
		if v.shape == nil && v.why == nil {
			v.why = fmt.Errorf("it is made by node %s (%s), whose output shapes are unknown",
				quote.Q(n.GetName()), quote.Q(n.GetOpType()))
		}
		for _, d := range v.shape {
			if d != unk && (d < 0 || d > workloads.MaxDim) {
				return g.nodeError(n, "output %s has dim %d, outside 0..%d",
					quote.Q(name), d, workloads.MaxDim)
			}
		}
		g.values[name] = v
	}
	return nil
}

// fromHints takes a skipped node's output shapes from value_info.
func (g *graph) fromHints(n *onnxpb.NodeProto, hints map[string]*onnxpb.ValueInfoProto) []*value {
	outs := make([]*value, len(n.GetOutput()))
	for i, name := range n.GetOutput() {
		vi := hints[name]
		if vi == nil || vi.GetType().GetTensorType().GetShape() == nil {
			return nil
		}
		v := &value{}
		for _, d := range vi.GetType().GetTensorType().GetShape().GetDim() {
			x := int64(unk)
			if d.GetValue() != nil && !isParam(d) {
				x = d.GetDimValue()
			}
			v.shape = append(v.shape, x)
		}
		outs[i] = v
	}
	return outs
}

// unknownOp is the error of an operator the importer does not model.
type unknownOp struct{ why string }

func (u *unknownOp) Error() string { return u.why }

// intHeap is a min-heap of node indices.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
