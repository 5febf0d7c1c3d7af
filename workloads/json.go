package workloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/stcsim/stcsim/internal/quote"
)

// ParseJSON reads a JSON trace: {"name": ..., "gemms": [{...}, ...]} with
// the same fields as the CSV columns. name is the file name used in errors,
// and the trace's name when the file gives none. Unknown and repeated keys,
// nulls, missing required fields and trailing data are errors.
func ParseJSON(r io.Reader, name string) (*Trace, error) {
	data, err := readTrace(r, name)
	if err != nil {
		return nil, err
	}
	p := &jsonParser{file: name, data: data,
		dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	t, err := p.trace()
	if err != nil {
		return nil, err
	}
	if t.Name == "" {
		t.Name = name
	}
	return t, nil
}

type jsonParser struct {
	file string
	data []byte
	dec  *json.Decoder
}

// next is the offset of the next token: after whitespace and the
// separators ',' and ':' that follow the decoder's position.
func (p *jsonParser) next() int {
	off := int(p.dec.InputOffset())
	for off < len(p.data) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (p *jsonParser) errAt(off int, field string, err error) error {
	line, col := p.lineCol(off)
	return &ParseError{File: p.file, Line: line, Column: col, Field: field,
		Err: err}
}

// lineCol is the 1-based line and column of a byte offset.
func (p *jsonParser) lineCol(off int) (line, col int) {
	off = min(max(off, 0), len(p.data))
	line = 1 + bytes.Count(p.data[:off], []byte("\n"))
	col = off + 1
	if nl := bytes.LastIndexByte(p.data[:off], '\n'); nl >= 0 {
		col = off - nl
	}
	return line, col
}

// tokenErr positions a decoder error: syntax errors carry their offset.
func (p *jsonParser) tokenErr(off int, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return p.errAt(int(se.Offset), "", err)
	}
	if err == io.EOF {
		return p.errAt(len(p.data), "", errors.New("unexpected end of file"))
	}
	return p.errAt(off, "", err)
}

// expect reads one delimiter token.
func (p *jsonParser) expect(d json.Delim, what string) error {
	off := p.next()
	tok, err := p.dec.Token()
	if err != nil {
		return p.tokenErr(off, err)
	}
	if tok != d {
		return p.errAt(off, "", fmt.Errorf("want %s, got %v", what, tok))
	}
	return nil
}

// key reads an object key, or reports the end of the object.
func (p *jsonParser) key() (k string, off int, end bool, err error) {
	off = p.next()
	tok, err := p.dec.Token()
	if err != nil {
		return "", off, false, p.tokenErr(off, err)
	}
	if tok == json.Delim('}') {
		return "", off, true, nil
	}
	s, ok := tok.(string)
	if !ok {
		return "", off, false, p.errAt(off, "", fmt.Errorf("want a key, got %v", tok))
	}
	return s, off, false, nil
}

// value reads one raw value; nulls are refused.
func (p *jsonParser) value(key string) (json.RawMessage, int, error) {
	off := p.next()
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		return nil, off, p.tokenErr(off, err)
	}
	if string(raw) == "null" {
		return nil, off, p.errAt(off, key, errors.New("null is not allowed"))
	}
	return raw, off, nil
}

func (p *jsonParser) trace() (*Trace, error) {
	if err := p.expect('{', "'{' starting the trace object"); err != nil {
		return nil, err
	}
	t := &Trace{}
	seen := map[string]bool{}
	for {
		k, koff, end, err := p.key()
		if err != nil {
			return nil, err
		}
		if end {
			break
		}
		if seen[k] {
			return nil, p.errAt(koff, k, errors.New("key given twice"))
		}
		seen[k] = true
		switch k {
		case "name":
			raw, off, err := p.value(k)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(raw, &t.Name); err != nil {
				return nil, p.errAt(off, k, errors.New("want a string"))
			}
			if quote.HasControl(t.Name) {
				return nil, p.errAt(off, k, fmt.Errorf("control character or "+
					"invalid UTF-8 in %s: printable text only", quote.Q(t.Name)))
			}
		case "gemms":
			var offs map[string]int
			if t.GEMMs, offs, err = p.gemms(); err != nil {
				return nil, err
			}
			t.Lines = &RowLines{File: p.file, Line: map[string]int{}}
			for name, off := range offs {
				t.Lines.Line[name], _ = p.lineCol(off)
			}
		case "provenance":
			// What wrote the file (TraceProvenance); informational, not
			// read back, but it must be an object.
			raw, off, err := p.value(k)
			if err != nil {
				return nil, err
			}
			if raw[0] != '{' {
				return nil, p.errAt(off, k, errors.New("want an object"))
			}
		default:
			return nil, p.errAt(koff, k, errors.New(`unknown key (want "name", "gemms", "provenance")`))
		}
	}
	if !seen["gemms"] {
		return nil, p.errAt(0, "gemms", errors.New("missing required key"))
	}
	if off := p.next(); off < len(p.data) {
		return nil, p.errAt(off, "", errors.New("trailing data after the trace object"))
	}
	return t, nil
}

// gemms reads the GEMM list, with each GEMM's offset by layer name.
func (p *jsonParser) gemms() ([]GEMM, map[string]int, error) {
	start := p.next()
	if err := p.expect('[', "'[' starting the GEMM list"); err != nil {
		return nil, nil, err
	}
	var out []GEMM
	offs := map[string]int{} // layer name -> offset of its GEMM
	for p.dec.More() {
		off := p.next()
		g, err := p.gemm()
		if err != nil {
			return nil, nil, err
		}
		if first, dup := offs[g.Name]; dup {
			line, _ := p.lineCol(first)
			return nil, nil, p.errAt(off, "name", duplicateName(g.Name,
				fmt.Sprintf("the GEMM on line %d", line)))
		}
		offs[g.Name] = off
		out = append(out, g)
	}
	if err := p.expect(']', "']' ending the GEMM list"); err != nil {
		return nil, nil, err
	}
	if len(out) == 0 {
		return nil, nil, p.errAt(start, "gemms", errors.New("no GEMMs in the list"))
	}
	return out, offs, nil
}

func (p *jsonParser) gemm() (GEMM, error) {
	start := p.next()
	if err := p.expect('{', "'{' starting a GEMM"); err != nil {
		return GEMM{}, err
	}
	var g GEMM
	ints, strs, texts := g.fields()
	pos := map[string]int{}
	for {
		k, koff, end, err := p.key()
		if err != nil {
			return GEMM{}, err
		}
		if end {
			break
		}
		if _, dup := pos[k]; dup {
			return GEMM{}, p.errAt(koff, k, errors.New("key given twice"))
		}
		raw, off, err := p.value(k)
		if err != nil {
			return GEMM{}, err
		}
		pos[k] = off
		if s, ok := strs[k]; ok {
			if json.Unmarshal(raw, s) != nil {
				return GEMM{}, p.errAt(off, k, errors.New("want a string"))
			}
			continue
		}
		if t, ok := texts[k]; ok {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return GEMM{}, p.errAt(off, k, errors.New("want a string"))
			}
			if err := t.UnmarshalText([]byte(s)); err != nil {
				return GEMM{}, p.errAt(off, k, err)
			}
			continue
		}
		v, ok := ints[k]
		if !ok {
			return GEMM{}, p.errAt(koff, k, fmt.Errorf("unknown key (known: "+
				"%v and optional %v)", requiredColumns, optionalColumns))
		}
		if json.Unmarshal(raw, v) != nil {
			return GEMM{}, p.errAt(off, k, fmt.Errorf("want a whole number, got %s", raw))
		}
	}
	for _, c := range requiredColumns {
		if _, ok := pos[c]; !ok {
			return GEMM{}, p.errAt(start, c, errors.New("missing required key"))
		}
	}
	if fe := g.check(); fe != nil {
		return GEMM{}, p.errAt(pos[fe.field], fe.field, fe.err)
	}
	return g, nil
}

// TraceProvenance records what wrote an exported trace (`stcsim trace
// export`): the tool version, the command line, and the workload with
// the options that shaped it, as a run's provenance records it (Origin).
// A JSON trace holds it as its "provenance" object, a CSV trace as a
// "# provenance: {...}" comment line.
type TraceProvenance struct {
	Version string `json:"version"`
	// Command is the command line (stcsim trace export ...); empty when
	// the trace was written through the library.
	Command []string `json:"command,omitempty"`
	Origin
	// PerLayer: one row per layer, identical GEMMs not merged.
	PerLayer bool `json:"per_layer,omitempty"`
}

// Origin is where a workload came from, with the options that shaped
// it: what a run's provenance records of each workload
// (sim.WorkloadSource) and an exported trace of itself.
type Origin struct {
	Name string `json:"name"`
	// Source is "model" for a built-in model, "gemm" for --gemm, else
	// the trace file's path as given.
	Source string `json:"source"`
	// SHA256 of a trace file's bytes.
	SHA256 string `json:"sha256,omitempty"`
	// Options of a built-in model or --gemm (batch; seq for BERT,
	// resolution for ResNet; precision), as given or defaulted.
	Batch      int    `json:"batch,omitempty"`
	Seq        int    `json:"seq,omitempty"`
	Resolution int    `json:"resolution,omitempty"`
	Precision  string `json:"precision,omitempty"`
	// The decoder LLMs' options (run --phase, --context,
	// --sparse-lm-head, --moe-schedule, --moe-imbalance).
	Phase        string  `json:"phase,omitempty"`
	Context      int     `json:"context,omitempty"`
	SparseLMHead bool    `json:"sparse_lm_head,omitempty"`
	MoESchedule  string  `json:"moe_schedule,omitempty"`
	MoEImbalance float64 `json:"moe_imbalance,omitempty"`
	// Layers is the --layer pattern that selected the workload's layers
	// (empty: all of them).
	Layers string `json:"layers,omitempty"`
	// Weights are the weight files its rows name, each once, with the
	// SHA-256 of their content (HashWeights): a trace's hash does not
	// cover the files it points at.
	Weights []WeightsSource `json:"weights,omitempty"`
	// Import says how a model file (ONNX, profiler trace) became the
	// trace; nil for a trace file or a built-in model.
	Import *Import `json:"import,omitempty"`
}

// WeightsSource is one weights path of a workload and its content hash.
type WeightsSource struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// WeightsSources hashes the weights the trace's rows name, in row order,
// each path once.
func (t *Trace) WeightsSources() ([]WeightsSource, error) {
	var out []WeightsSource
	seen := map[string]bool{}
	for _, g := range t.GEMMs {
		if g.Weights == "" || seen[g.Weights] {
			continue
		}
		seen[g.Weights] = true
		h, err := HashWeights(g.Weights)
		if err != nil {
			return nil, fmt.Errorf("workload %s, row %s: %w", t.Name, g.Name, err)
		}
		out = append(out, WeightsSource{Path: g.Weights, SHA256: h})
	}
	return out, nil
}

// WriteJSON writes the trace in the JSON format ParseJSON reads, indented,
// one GEMM per object.
func (t *Trace) WriteJSON(w io.Writer) error {
	return t.WriteJSONProvenance(w, nil)
}

// WriteJSONProvenance is WriteJSON with a "provenance" object after the
// name (none when p is nil).
func (t *Trace) WriteJSONProvenance(w io.Writer, p *TraceProvenance) error {
	out := struct {
		Name       string           `json:"name"`
		Provenance *TraceProvenance `json:"provenance,omitempty"`
		GEMMs      []GEMM           `json:"gemms"`
	}{t.Name, p, slices.Clip(t.GEMMs)}
	if out.GEMMs == nil {
		out.GEMMs = []GEMM{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write trace %s: %w", t.Name, err)
	}
	return nil
}
