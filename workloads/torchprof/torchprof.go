// Package torchprof imports a PyTorch profiler trace (torch.profiler with
// record_shapes=True, written by export_chrome_trace) as GEMM layers in
// the orientation of the built-in models (docs/workloads.md, "Bring your
// own model"): every aten::mm, addmm, bmm, baddbmm, matmul, linear and
// convolution call with its "Input Dims", counted once at the GEMM that
// runs.
package torchprof

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads"
)

// Importer names this importer and its version in a trace's provenance.
const Importer = "stcsim-torchprof 1"

// MaxProfileBytes bounds a profiler trace file.
const MaxProfileBytes = 512 << 20

// Result is an imported profile.
type Result struct {
	Layers  []workloads.ImportedLayer
	Skipped []string
}

// event is one complete ("X") event of the trace.
type event struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Ts   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	Args struct {
		InputDims      []json.RawMessage `json:"Input Dims"`
		ConcreteInputs []json.RawMessage `json:"Concrete Inputs"`
	} `json:"args"`

	index      int // position in the file
	start, end float64
	thread     string
	wrapper    bool // contains another GEMM event
	nested     bool // inside another convolution event
}

// linearOps are the products with a weight on the right (torch's
// linear lowers to addmm(bias, x, W^T) or matmul -> mm); batchedOps
// multiply two activations. matmul and linear count only where no
// mm/bmm under them was recorded.
var (
	linearOps  = map[string]bool{"aten::mm": true, "aten::addmm": true, "aten::linear": true, "aten::matmul": true}
	batchedOps = map[string]bool{"aten::bmm": true, "aten::baddbmm": true}
	// convOps are the convolutions whose argument order is known: input,
	// weight, bias, stride, padding, dilation, then (convolution,
	// _convolution) transposed, output_padding, groups or (convN d)
	// groups. A convolution is counted at the outermost of its nested
	// calls (conv2d -> convolution -> _convolution -> mkldnn_convolution).
	convOps = map[string]int{"aten::conv1d": 6, "aten::conv2d": 6, "aten::conv3d": 6,
		"aten::convolution": 8, "aten::_convolution": 8}
)

func isConv(name string) bool {
	return strings.HasPrefix(name, "aten::") && strings.Contains(name, "conv") &&
		!strings.Contains(name, "backward") && !strings.Contains(name, "transpose")
}

func isGEMM(name string) bool { return linearOps[name] || batchedOps[name] }

// IsProfile tells whether JSON data looks like a profiler trace (an
// object with "traceEvents", or the legacy profiler's bare event list)
// rather than a stcsim JSON trace.
func IsProfile(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(data) > 0 && data[0] == '[' {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == "traceEvents" {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// Import reads the profiler trace in data (file names it in messages).
func Import(data []byte, file string) (*Result, error) {
	if len(data) > MaxProfileBytes {
		return nil, fmt.Errorf("%s: %d bytes is above the limit of %d MiB for a profiler trace",
			file, len(data), MaxProfileBytes>>20)
	}
	events, err := decode(data, file)
	if err != nil {
		return nil, err
	}
	var gemms, convs []*event
	shaped := false
	for _, e := range events {
		if e.Ph != "X" {
			continue
		}
		if isGEMM(e.Name) || isConv(e.Name) {
			if err := e.times(file); err != nil {
				return nil, err
			}
			if len(e.Args.InputDims) > 0 {
				shaped = true
			}
		}
		if isGEMM(e.Name) {
			gemms = append(gemms, e)
		} else if isConv(e.Name) {
			convs = append(convs, e)
		}
	}
	if len(gemms)+len(convs) == 0 {
		return nil, fmt.Errorf("%s: no aten::mm, addmm, bmm, baddbmm, matmul, linear or "+
			"convolution event: nothing to simulate", file)
	}
	if !shaped {
		return nil, fmt.Errorf("%s: no GEMM event records \"Input Dims\": profile with "+
			"record_shapes=True (torch.profiler; the legacy autograd profiler's "+
			"export_chrome_trace writes no shapes)", file)
	}
	classify(gemms, convs)
	all := slices.Concat(gemms, convs)
	slices.SortFunc(all, func(a, b *event) int { return a.index - b.index })
	r := &Result{}
	calls := map[string]int{}
	skipped := map[string]int{}
	var skipOrder []string
	for _, e := range all {
		if e.wrapper || e.nested {
			continue
		}
		l, skip, err := layer(e)
		if err != nil {
			return nil, fmt.Errorf("%s: event %d (%s): %v", file, e.index, quote.Q(e.Name), err)
		}
		if skip != "" {
			if skipped[skip] == 0 {
				skipOrder = append(skipOrder, skip)
			}
			skipped[skip]++
			continue
		}
		base := rowName(e.Name, l)
		l.Name = fmt.Sprintf("%s.%d", base, calls[base])
		calls[base]++
		r.Layers = append(r.Layers, l)
	}
	for _, s := range skipOrder {
		r.Skipped = append(r.Skipped, fmt.Sprintf("%d call(s): %s", skipped[s], s))
	}
	if len(r.Layers) == 0 {
		return nil, fmt.Errorf("%s: no GEMM could be imported: %s", file, strings.Join(r.Skipped, "; "))
	}
	return r, nil
}

func decode(data []byte, file string) ([]*event, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	var events []*event
	var err error
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &events)
	} else {
		var top struct {
			TraceEvents *[]*event `json:"traceEvents"`
		}
		err = json.Unmarshal(trimmed, &top)
		if err == nil && top.TraceEvents == nil {
			return nil, fmt.Errorf("%s: not a PyTorch profiler trace (a JSON object without \"traceEvents\")", file)
		}
		if top.TraceEvents != nil {
			events = *top.TraceEvents
		}
	}
	if err != nil {
		msg := err.Error()
		if len(msg) > 80 {
			msg = msg[:80] + "..."
		}
		return nil, fmt.Errorf("%s: not a PyTorch profiler trace (want the JSON of "+
			"export_chrome_trace, {\"traceEvents\": [...]}): %s", file, msg)
	}
	for i, e := range events {
		if e == nil {
			return nil, fmt.Errorf("%s: event %d is null", file, i)
		}
		e.index = i
	}
	return events, nil
}

// times reads an event's start and end and its thread.
func (e *event) times(file string) error {
	ts, err1 := e.Ts.Float64()
	dur, err2 := e.Dur.Float64()
	if err1 != nil || err2 != nil || dur < 0 {
		return fmt.Errorf("%s: event %d (%s): ts %s and dur %s must be numbers, dur >= 0",
			file, e.index, quote.Q(e.Name), quote.Q(e.Ts.String()), quote.Q(e.Dur.String()))
	}
	e.start, e.end = ts, ts+dur
	e.thread = string(e.Pid) + "/" + string(e.Tid)
	return nil
}

// classify marks the GEMM events that contain another (wrappers, such as
// matmul over mm) and the convolutions inside another (conv2d over
// convolution over _convolution); only the others are counted.
func classify(gemms, convs []*event) {
	nest(gemms, func(parent, _ *event) { parent.wrapper = true })
	nest(convs, func(_, child *event) { child.nested = true })
}

// nest calls f(parent, child) for every event that lies within another of
// the same thread (by ts and dur; ties keep the file's order, parent
// first), with the innermost event that holds it. The events that hold
// one form a stack, each within the one below: every ancestor of child
// was the parent of the next one up, so f sees each nesting once and the
// walk is linear in the events, whatever the depth (a rescan of the
// whole stack made 400k nested calls take minutes).
func nest(events []*event, f func(parent, child *event)) {
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(a, b *event) int {
		switch {
		case a.thread != b.thread:
			return strings.Compare(a.thread, b.thread)
		case a.start != b.start:
			if a.start < b.start {
				return -1
			}
			return 1
		case a.end != b.end: // the longer (outer) first
			if a.end > b.end {
				return -1
			}
			return 1
		}
		return a.index - b.index
	})
	var stack []*event
	for _, e := range sorted {
		for len(stack) > 0 && (stack[len(stack)-1].thread != e.thread || stack[len(stack)-1].end < e.end) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			f(stack[len(stack)-1], e)
		}
		stack = append(stack, e)
	}
}

// dims reads entry i of Input Dims as a tensor shape (ok false when it
// is absent or not a list of whole numbers).
func (e *event) dims(i int) ([]int64, bool) {
	if i >= len(e.Args.InputDims) {
		return nil, false
	}
	var d []int64
	if json.Unmarshal(e.Args.InputDims[i], &d) != nil {
		return nil, false
	}
	return d, true
}

// need reads the shapes of the operands at the given positions, each of
// the given rank range.
func (e *event) need(pos []int, minRank, maxRank int) ([][]int64, error) {
	var out [][]int64
	for _, p := range pos {
		d, ok := e.dims(p)
		if !ok || len(d) < minRank || len(d) > maxRank {
			return nil, fmt.Errorf("Input Dims %s: want a rank %d..%d tensor at position %d",
				quote.Q(string(joinRaw(e.Args.InputDims))), minRank, maxRank, p)
		}
		for _, x := range d {
			if x < 0 || x > workloads.MaxDim {
				return nil, fmt.Errorf("Input Dims position %d: dim %d is outside 0..%d", p, x, workloads.MaxDim)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

func joinRaw(r []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, x := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(x)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func product(d []int64) (int, error) {
	p := int64(1)
	for _, x := range d {
		if x > 0 && p > workloads.MaxDim/x {
			return 0, fmt.Errorf("dims %v: product above the limit %d", d, workloads.MaxDim)
		}
		p *= x
	}
	return int(p), nil
}

// rowName names a row after its operator and GEMM shape (a profiler
// trace has no module names): "addmm_768x256x768", "bmm_128x128x64x24"
// (batch last); Import appends the call's number among those of its name.
func rowName(op string, l workloads.ImportedLayer) string {
	name := fmt.Sprintf("%s_%dx%dx%d", strings.TrimPrefix(op, "aten::"), l.M, l.N, l.K)
	if l.Batch > 1 {
		name += fmt.Sprintf("x%d", l.Batch)
	}
	return name
}

// layer turns one counted event into a layer, or says why it is skipped.
func layer(e *event) (workloads.ImportedLayer, string, error) {
	var l workloads.ImportedLayer
	switch e.Name {
	case "aten::mm", "aten::addmm":
		pos := []int{0, 1}
		if e.Name == "aten::addmm" {
			pos = []int{1, 2}
		}
		d, err := e.need(pos, 2, 2)
		if err != nil {
			return l, "", err
		}
		return weightRight(d[0], d[1][0], d[1][1])
	case "aten::linear":
		d, err := e.need([]int{0, 1}, 1, 8)
		if err != nil {
			return l, "", err
		}
		if len(d[1]) != 2 {
			return l, "", fmt.Errorf("weight %v is not [out, in]", d[1])
		}
		return weightRight(d[0], d[1][1], d[1][0])
	case "aten::matmul":
		d, err := e.need([]int{0, 1}, 1, 8)
		if err != nil {
			return l, "", err
		}
		if len(d[0]) < 2 || len(d[1]) < 2 {
			return l, "aten::matmul with a vector operand (no GEMM recorded under it), skipped", nil
		}
		if len(d[1]) == 2 {
			return weightRight(d[0], d[1][0], d[1][1])
		}
		return batched(d[0], d[1])
	case "aten::bmm", "aten::baddbmm":
		pos := []int{0, 1}
		if e.Name == "aten::baddbmm" {
			pos = []int{1, 2}
		}
		d, err := e.need(pos, 3, 3)
		if err != nil {
			return l, "", err
		}
		return batched(d[0], d[1])
	}
	return conv(e)
}

// weightRight is X [..., t, in] x W^T [in, out]: the leading dims fold
// into the tokens (N), M = out, K = in; ASP-prunable.
func weightRight(x []int64, in, out int64) (workloads.ImportedLayer, string, error) {
	var l workloads.ImportedLayer
	if x[len(x)-1] != in {
		return l, "", fmt.Errorf("operands %v and [%d %d] do not multiply", x, in, out)
	}
	n, err := product(x[:len(x)-1])
	if err != nil {
		return l, "", err
	}
	l = workloads.ImportedLayer{M: int(out), N: n, K: int(in), Batch: 1,
		Out: int(out), In: int(in), Prunable: true}
	return l, emptyGEMM(l), nil
}

// batched is A [b..., r, k] x B [b..., k, c] of two activations, written
// transposed as the built-in attention rows: M = c, N = r, K = k, batch
// = the product of the batch dims; dense.
func batched(a, b []int64) (workloads.ImportedLayer, string, error) {
	var l workloads.ImportedLayer
	r, k := a[len(a)-2], a[len(a)-1]
	k2, c := b[len(b)-2], b[len(b)-1]
	if k != k2 {
		return l, "", fmt.Errorf("operands %v and %v do not multiply", a, b)
	}
	ba, bb := a[:len(a)-2], b[:len(b)-2]
	if len(bb) > len(ba) {
		ba = bb
	}
	bt, err := product(ba)
	if err != nil {
		return l, "", err
	}
	l = workloads.ImportedLayer{M: int(c), N: int(r), K: int(k), Batch: bt,
		Note: "activations x activations, written transposed (M = columns of the second operand, N = rows of the first); dense"}
	return l, emptyGEMM(l), nil
}

func emptyGEMM(l workloads.ImportedLayer) string {
	if l.M == 0 || l.N == 0 || l.K == 0 || l.Batch == 0 {
		return fmt.Sprintf("an empty GEMM (%dx%dx%d, batch %d), skipped", l.M, l.N, l.K, l.Batch)
	}
	return ""
}

// conv is a convolution as the implicit GEMM of docs/workloads.md, from
// its input and weight dims and, where the trace records them ("Concrete
// Inputs", newer torch), its stride, padding, dilation and groups.
func conv(e *event) (workloads.ImportedLayer, string, error) {
	var l workloads.ImportedLayer
	d, err := e.need([]int{0, 1}, 3, 5)
	if err != nil {
		return l, "", err
	}
	x, w := d[0], d[1]
	groupsAt, known := convOps[e.Name]
	if !known {
		return l, fmt.Sprintf("%s (input %v, weight %v): an operator whose arguments the importer "+
			"does not know, skipped; import the model's ONNX graph instead", e.Name, x, w), nil
	}
	ci := e.Args.ConcreteInputs
	sp := len(x) - 2
	stride, ok1 := intList(ci, 3, sp)
	pad, ok2 := intList(ci, 4, sp)
	dil, ok3 := intList(ci, 5, sp)
	groups, ok4 := intList(ci, groupsAt, 1)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return l, fmt.Sprintf("%s (input %v, weight %v): the trace records no stride, padding, "+
			"dilation and groups (\"Concrete Inputs\", written by torch 2.x), so the output size is "+
			"unknown; skipped: import the model's ONNX graph instead", e.Name, x, w), nil
	}
	if e.Name == "aten::convolution" || e.Name == "aten::_convolution" {
		if len(ci) > 6 && strings.Trim(string(ci[6]), `"`) == "True" {
			return l, fmt.Sprintf("%s (input %v, weight %v): a transposed convolution, skipped", e.Name, x, w), nil
		}
	}
	g := groups[0]
	if len(w) != len(x) || g < 1 || x[1]%g != 0 || w[0]%g != 0 || w[1] != x[1]/g {
		return l, "", fmt.Errorf("input %v, weight %v and groups %d do not fit", x, w, g)
	}
	out := []int64{x[0]}
	for i := range sp {
		span := dil[i]*(w[2+i]-1) + 1
		num := x[2+i] + 2*pad[i] - span
		if num < 0 || stride[i] < 1 {
			return l, "", fmt.Errorf("input %v, weight %v, stride %v, padding %v: no output", x, w, stride, pad)
		}
		out = append(out, num/stride[i]+1)
	}
	n, err := product(out)
	if err != nil {
		return l, "", err
	}
	k, err := product(append([]int64{x[1] / g}, w[2:]...))
	if err != nil {
		return l, "", err
	}
	l = workloads.ImportedLayer{M: int(w[0] / g), N: n, K: k, Batch: int(g),
		Out: int(w[0]), In: int(x[1] / g), Prunable: true}
	if g > 1 {
		l.Note = fmt.Sprintf("grouped convolution: %d groups as a batched GEMM", g)
	}
	return l, emptyGEMM(l), nil
}

// intList reads Concrete Inputs entry i, a string like "[2, 2]" or "1",
// as n whole numbers (a single value is repeated).
func intList(ci []json.RawMessage, i, n int) ([]int64, bool) {
	if i >= len(ci) {
		return nil, false
	}
	var s string
	if json.Unmarshal(ci[i], &s) != nil {
		return nil, false
	}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []int64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 || v > 1<<20 {
			return nil, false
		}
		out = append(out, v)
	}
	if len(out) == 1 && n > 1 {
		for len(out) < n {
			out = append(out, out[0])
		}
	}
	return out, len(out) == n
}
