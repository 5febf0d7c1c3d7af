package tensorfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/tensorcore"
)

// Tensor is a dense tensor read from a weight file, values widened to
// float32 (exact for float16 and bfloat16).
type Tensor struct {
	// Name is the tensor's name in a safetensors file; empty for .npy.
	Name  string
	DType string // as in the file: "<f2", "<f4", "F16", "BF16", ...
	Shape []int
	Data  []float32
}

// MaxTensorElements bounds the size of a tensor read from a file.
const MaxTensorElements = 1 << 31

// elements is the product of the shape, or an error when a dimension is
// negative or the product is beyond MaxTensorElements.
func elements(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", shape)
		}
		if d > 0 && n > MaxTensorElements/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape,
				MaxTensorElements)
		}
		n *= d
	}
	return n, nil
}

// readExactly reads want bytes, then requires the end of the input.
func readExactly(r io.Reader, want int) ([]byte, error) {
	buf, err := io.ReadAll(io.LimitReader(r, int64(want)+1))
	if err != nil {
		return nil, err
	}
	if len(buf) < want {
		return nil, fmt.Errorf("truncated: data has %d bytes, the header "+
			"promises %d", len(buf), want)
	}
	if len(buf) > want {
		return nil, fmt.Errorf("trailing bytes after the %d bytes of data", want)
	}
	return buf, nil
}

// decodeFloats widens little- or big-endian float16, bfloat16, float32 or
// float64 values to float32.
func decodeFloats(b []byte, kind string, order binary.ByteOrder) []float32 {
	size := map[string]int{"f16": 2, "bf16": 2, "f32": 4, "f64": 8}[kind]
	out := make([]float32, len(b)/size)
	for i := range out {
		e := b[i*size : (i+1)*size]
		switch kind {
		case "f16":
			out[i] = Float16ToFloat32(order.Uint16(e))
		case "bf16":
			out[i] = math.Float32frombits(uint32(order.Uint16(e)) << 16)
		case "f32":
			out[i] = math.Float32frombits(order.Uint32(e))
		case "f64":
			out[i] = float32(math.Float64frombits(order.Uint64(e)))
		}
	}
	return out
}

// Float16ToFloat32 converts IEEE binary16 bits to float32 (exactly).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// ---- NumPy .npy ----

var npyMagic = []byte("\x93NUMPY")

// npyKinds maps a .npy descr's type code (after the byte-order mark) to
// the decoded kind.
var npyKinds = map[string]string{"f2": "f16", "f4": "f32", "f8": "f64"}

// ReadNPY reads a NumPy .npy array (format versions 1.0 to 3.0) of
// float16, float32 or float64 in C order. name is used in errors.
func ReadNPY(r io.Reader, name string) (*Tensor, error) {
	t, err := readNPY(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return t, nil
}

func readNPY(r io.Reader) (*Tensor, error) {
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, errors.New("not a .npy file: shorter than its 8-byte preamble")
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return nil, errors.New(`not a .npy file: missing the "\x93NUMPY" magic`)
	}
	major := pre[6]
	var hlen int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, errors.New("truncated .npy header length")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, errors.New("truncated .npy header length")
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		if hlen > 1<<20 {
			return nil, fmt.Errorf(".npy header of %d bytes is implausibly long", hlen)
		}
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d.%d", major, pre[7])
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated .npy header: want %d bytes", hlen)
	}
	descr, fortran, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, fmt.Errorf(".npy header %s: %w", quote.Q(strings.TrimSpace(string(hdr))), err)
	}
	if fortran {
		return nil, errors.New("Fortran-order arrays are not supported " +
			"(save with numpy.ascontiguousarray)")
	}
	kind, ok := npyKinds[descr[1:]]
	var order binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	if !ok || (descr[0] != '<' && descr[0] != '>') {
		return nil, fmt.Errorf("unsupported dtype %s: want float16 ('<f2'), "+
			"float32 ('<f4') or float64 ('<f8')", quote.Q(descr))
	}
	n, err := elements(shape)
	if err != nil {
		return nil, err
	}
	size := map[string]int{"f16": 2, "f32": 4, "f64": 8}[kind]
	data, err := readExactly(r, n*size)
	if err != nil {
		return nil, err
	}
	return &Tensor{DType: descr, Shape: shape,
		Data: decodeFloats(data, kind, order)}, nil
}

// parseNPYHeader reads the Python dict literal of a .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	s := strings.TrimRight(h, " \n")
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return "", false, nil, errors.New("not a dict literal")
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	seen := map[string]bool{}
	for s != "" {
		var key string
		key, s, err = pyString(s)
		if err != nil {
			return "", false, nil, err
		}
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, ":") {
			return "", false, nil, fmt.Errorf("want ':' after key %s", quote.Q(key))
		}
		s = strings.TrimSpace(s[1:])
		if seen[key] {
			return "", false, nil, fmt.Errorf("key %s given twice", quote.Q(key))
		}
		seen[key] = true
		switch key {
		case "descr":
			descr, s, err = pyString(s)
			if err == nil && len(descr) < 2 {
				err = fmt.Errorf("bad descr %s", quote.Q(descr))
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(s, "False"):
				s = s[5:]
			case strings.HasPrefix(s, "True"):
				fortran, s = true, s[4:]
			default:
				err = errors.New("fortran_order: want True or False")
			}
		case "shape":
			shape, s, err = pyTuple(s)
		default:
			err = fmt.Errorf("unknown key %s", quote.Q(key))
		}
		if err != nil {
			return "", false, nil, err
		}
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, ",") {
			s = strings.TrimSpace(s[1:])
		} else if s != "" {
			return "", false, nil, fmt.Errorf("want ',' after the value of %s", quote.Q(key))
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return "", false, nil, fmt.Errorf("missing key %s", quote.Q(k))
		}
	}
	return descr, fortran, shape, nil
}

// pyString reads a quoted Python string without escapes.
func pyString(s string) (string, string, error) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", s, errors.New("want a quoted string")
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, errors.New("unterminated string")
	}
	v := s[1 : 1+end]
	if strings.ContainsRune(v, '\\') {
		return "", s, errors.New("escapes in strings are not supported")
	}
	return v, s[2+end:], nil
}

// pyTuple reads a tuple of non-negative integers: (), (3,), (3, 4).
func pyTuple(s string) ([]int, string, error) {
	if !strings.HasPrefix(s, "(") {
		return nil, s, errors.New("shape: want a tuple")
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return nil, s, errors.New("shape: unterminated tuple")
	}
	body, rest := strings.TrimSpace(s[1:end]), s[end+1:]
	shape := []int{}
	if body == "" {
		return shape, rest, nil
	}
	parts := strings.Split(body, ",")
	if strings.TrimSpace(parts[len(parts)-1]) == "" {
		parts = parts[:len(parts)-1]
	}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		p = strings.TrimSuffix(p, "L") // Python 2 longs
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return nil, s, fmt.Errorf("shape: bad dimension %s", quote.Q(p))
		}
		shape = append(shape, v)
	}
	return shape, rest, nil
}

// WriteNPY writes a float32 little-endian C-order .npy (format 1.0).
func WriteNPY(w io.Writer, shape []int, data []float32) error {
	n, err := elements(shape)
	if err != nil {
		return err
	}
	if n != len(data) {
		return fmt.Errorf("write .npy: shape %v needs %d values, have %d",
			shape, n, len(data))
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
	// Pad so that the data starts on a 64-byte boundary, newline last.
	total := len(npyMagic) + 2 + 2 + len(hdr) + 1
	hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
	buf := bytes.NewBuffer(make([]byte, 0, 10+len(hdr)+4*len(data)))
	buf.Write(npyMagic)
	buf.Write([]byte{1, 0})
	binary.Write(buf, binary.LittleEndian, uint16(len(hdr)))
	buf.WriteString(hdr)
	for _, v := range data {
		binary.Write(buf, binary.LittleEndian, math.Float32bits(v))
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write .npy: %w", err)
	}
	return nil
}

// ---- safetensors ----

// safetensorsKinds maps a safetensors dtype to the decoded kind.
var safetensorsKinds = map[string]string{"F16": "f16", "BF16": "bf16",
	"F32": "f32", "F64": "f64"}

type safetensorsEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// FieldTensor is ReadSafetensors' tensor argument, the name of the
// tensor to read, as errors name it (package field).
const FieldTensor field.Name = "tensor"

// ReadSafetensors reads one tensor of a .safetensors file: the one named
// tensor, or the only tensor when tensor is empty. Supported dtypes: F16,
// BF16, F32, F64. name is used in errors.
func ReadSafetensors(r io.Reader, name, tensor string) (*Tensor, error) {
	t, err := readSafetensors(r, tensor)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return t, nil
}

func readSafetensors(r io.Reader, tensor string) (*Tensor, error) {
	var lenb [8]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		return nil, errors.New("not a safetensors file: shorter than its 8-byte header length")
	}
	hlen := binary.LittleEndian.Uint64(lenb[:])
	if hlen > 100<<20 {
		return nil, fmt.Errorf("safetensors header of %d bytes is implausibly long", hlen)
	}
	hdr, err := io.ReadAll(io.LimitReader(r, int64(hlen)))
	if err != nil || uint64(len(hdr)) != hlen {
		return nil, fmt.Errorf("truncated safetensors header: want %d bytes", hlen)
	}
	raw, err := headerEntries(hdr)
	if err != nil {
		return nil, fmt.Errorf("safetensors header: %w", err)
	}
	delete(raw, "__metadata__")
	end, err := checkLayout(raw)
	if err != nil {
		return nil, fmt.Errorf("safetensors header: %w", err)
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		if quote.HasControl(n) {
			return nil, fmt.Errorf("safetensors header: tensor name %s: control "+
				"character or invalid UTF-8 (printable text only)", quote.Q(n))
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if tensor == "" {
		if len(names) != 1 {
			return nil, field.Errorf("the file holds %d tensors, name one "+
				"(file.safetensors#NAME or %s): %s", len(names), FieldTensor,
				listNames(names))
		}
		tensor = names[0]
	}
	entryRaw, ok := raw[tensor]
	if !ok {
		return nil, fmt.Errorf("no tensor %s (have: %s)", quote.Q(tensor), listNames(names))
	}
	var e safetensorsEntry
	dec := json.NewDecoder(bytes.NewReader(entryRaw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("tensor %s header: %w", quote.Q(tensor), err)
	}
	kind, ok := safetensorsKinds[e.DType]
	if !ok {
		return nil, fmt.Errorf("tensor %s: unsupported dtype %s (want F16, "+
			"BF16, F32 or F64)", quote.Q(tensor), quote.Q(e.DType))
	}
	n, err := elements(e.Shape)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", quote.Q(tensor), err)
	}
	size := map[string]int{"f16": 2, "bf16": 2, "f32": 4, "f64": 8}[kind]
	if len(e.DataOffsets) != 2 || e.DataOffsets[0] < 0 ||
		e.DataOffsets[1] < e.DataOffsets[0] ||
		e.DataOffsets[1]-e.DataOffsets[0] != int64(n*size) {
		return nil, fmt.Errorf("tensor %s: data_offsets %v do not hold %d "+
			"%s values of shape %v", quote.Q(tensor), e.DataOffsets, n, e.DType, e.Shape)
	}
	if _, err := io.CopyN(io.Discard, r, e.DataOffsets[0]); err != nil {
		return nil, fmt.Errorf("tensor %s: truncated before its data at "+
			"offset %d", quote.Q(tensor), e.DataOffsets[0])
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(n*size)))
	if err != nil {
		return nil, err
	}
	if len(data) < n*size {
		return nil, fmt.Errorf("tensor %s: truncated: %d of %d data bytes",
			quote.Q(tensor), len(data), n*size)
	}
	if err := checkEnd(r, end-e.DataOffsets[1]); err != nil {
		return nil, err
	}
	return &Tensor{Name: tensor, DType: e.DType, Shape: e.Shape,
		Data: decodeFloats(data, kind, binary.LittleEndian)}, nil
}

// headerEntries reads the header's top-level object, refusing a key that
// appears twice (a JSON decoder would keep the last silently).
func headerEntries(hdr []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("tensor %s listed twice", quote.Q(key))
		}
		out[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the header object")
	}
	return out, nil
}

// checkLayout requires the tensors' data to tile the byte buffer from 0,
// without overlaps or holes (the safetensors format), and returns its end.
func checkLayout(raw map[string]json.RawMessage) (int64, error) {
	type span struct {
		name       string
		start, end int64
	}
	var spans []span
	for name, r := range raw {
		var e struct {
			DataOffsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(r, &e); err != nil || len(e.DataOffsets) != 2 {
			return 0, fmt.Errorf("tensor %s: want data_offsets [start, end]", quote.Q(name))
		}
		spans = append(spans, span{name, e.DataOffsets[0], e.DataOffsets[1]})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].name < spans[j].name
	})
	var end int64
	for _, sp := range spans {
		if sp.start != end || sp.end < sp.start {
			return 0, fmt.Errorf("tensor %s: data_offsets [%d, %d] overlap "+
				"another tensor or leave a hole (the data must run from 0 "+
				"without gaps)", quote.Q(sp.name), sp.start, sp.end)
		}
		end = sp.end
	}
	return end, nil
}

// checkEnd skips the rest bytes of data after the tensor read and
// requires the file to end there.
func checkEnd(r io.Reader, rest int64) error {
	if _, err := io.CopyN(io.Discard, r, rest); err != nil {
		return fmt.Errorf("truncated: the data ends before the header's " +
			"last offset")
	}
	var b [1]byte
	if n, _ := r.Read(b[:]); n > 0 {
		return errors.New("bytes after the last tensor's data")
	}
	return nil
}

func listNames(names []string) string {
	var out []string
	for i, n := range names {
		if i == 20 {
			out = append(out, fmt.Sprintf("... (%d more)", len(names)-20))
			break
		}
		if len(n) > quote.Max {
			n = quote.Q(n)
		}
		out = append(out, n)
	}
	return strings.Join(out, ", ")
}

// WriteSafetensors writes tensors (float32, "F32") in the safetensors
// format, in the given order. Used by tests and tools.
func WriteSafetensors(w io.Writer, tensors []Tensor) error {
	hdr := map[string]safetensorsEntry{}
	var off int64
	for _, t := range tensors {
		n, err := elements(t.Shape)
		if err != nil || n != len(t.Data) {
			return fmt.Errorf("write safetensors: tensor %q: shape %v does "+
				"not match %d values", t.Name, t.Shape, len(t.Data))
		}
		hdr[t.Name] = safetensorsEntry{DType: "F32", Shape: t.Shape,
			DataOffsets: []int64{off, off + int64(4*n)}}
		off += int64(4 * n)
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("write safetensors: %w", err)
	}
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(js)))
	buf.Write(js)
	for _, t := range tensors {
		for _, v := range t.Data {
			binary.Write(&buf, binary.LittleEndian, math.Float32bits(v))
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write safetensors: %w", err)
	}
	return nil
}

// GEMMView is the tensor as the M x K A operand: a 2-D [out, in] Linear
// weight as is; a 4-D [out, C, R, S] Conv weight (PyTorch's OIHW layout)
// as out x (R*S*C) with C fastest, the implicit-GEMM K order of NHWC
// kernels, so that 2:4 groups run along input channels as NVIDIA ASP
// prunes them.
func (t *Tensor) GEMMView() (tensorcore.Matrix, error) {
	switch len(t.Shape) {
	case 2:
		return tensorcore.Matrix{Rows: t.Shape[0], Cols: t.Shape[1],
			Data: t.Data}, nil
	case 4:
		o, c, r, s := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
		m := tensorcore.NewMatrix(o, r*s*c)
		for oi := range o {
			for ci := range c {
				for ri := range r {
					for si := range s {
						v := t.Data[((oi*c+ci)*r+ri)*s+si]
						m.Data[oi*m.Cols+(ri*s+si)*c+ci] = v
					}
				}
			}
		}
		return m, nil
	}
	return tensorcore.Matrix{}, fmt.Errorf("weight of shape %v: want a 2-D "+
		"[out, in] Linear or 4-D [out, in, kh, kw] Conv weight", t.Shape)
}

// FromGEMMView is the inverse of GEMMView: m laid out in t's shape.
func (t *Tensor) FromGEMMView(m tensorcore.Matrix) []float32 {
	if len(t.Shape) != 4 {
		return m.Data
	}
	o, c, r, s := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
	out := make([]float32, len(m.Data))
	for oi := range o {
		for ci := range c {
			for ri := range r {
				for si := range s {
					out[((oi*c+ci)*r+ri)*s+si] = m.Data[oi*m.Cols+(ri*s+si)*c+ci]
				}
			}
		}
	}
	return out
}
