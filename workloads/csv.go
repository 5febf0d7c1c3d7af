package workloads

import (
	"bytes"
	"encoding"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/stcsim/stcsim/internal/quote"
)

// Columns of the CSV trace format (docs/trace-format.md), in the order
// WriteCSV writes them. The first eight are required in every file.
var (
	requiredColumns = []string{"name", "m", "n", "k", "precision",
		"sparsity", "count", "batch"}
	optionalColumns = []string{"weights", "note", "unpadded_m", "unpadded_k", "sparse_operand", "layout"}
)

// ParseCSV reads a CSV trace. name is the file name used in errors and as
// the trace's name. The first non-comment line is the header; lines
// starting with '#' are comments.
func ParseCSV(r io.Reader, name string) (*Trace, error) {
	data, err := readTrace(r, name)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	cr.FieldsPerRecord = 0
	p := csvParser{file: name, r: cr}
	if err := p.header(); err != nil {
		return nil, err
	}
	t := &Trace{Name: name}
	lines := map[string]int{} // layer name -> its line
	for {
		g, err := p.row()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line, column := p.r.FieldPos(p.col["name"])
		if first, dup := lines[g.Name]; dup {
			return nil, p.errAt(line, column, "name", duplicateName(g.Name,
				fmt.Sprintf("line %d", first)))
		}
		lines[g.Name] = line
		t.GEMMs = append(t.GEMMs, g)
	}
	if len(t.GEMMs) == 0 {
		return nil, &ParseError{File: name, Line: p.headerLine, Column: 1,
			Err: errors.New("no GEMM rows after the header")}
	}
	t.Lines = &RowLines{File: name, Line: lines}
	return t, nil
}

type csvParser struct {
	file       string
	r          *csv.Reader
	headerLine int
	// col maps a column name to its index in each record; names lists
	// the columns in header order.
	col   map[string]int
	names []string
}

func (p *csvParser) errAt(line, column int, field string, err error) error {
	return &ParseError{File: p.file, Line: line, Column: column,
		Field: field, Err: err}
}

// readErr converts an encoding/csv error into a positioned one.
func (p *csvParser) readErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return p.errAt(pe.Line, max(pe.Column, 1), "", pe.Err)
	}
	return fmt.Errorf("read trace %s: %w", p.file, err)
}

func (p *csvParser) header() error {
	rec, err := p.r.Read()
	if err == io.EOF {
		return p.errAt(1, 1, "", errors.New("empty file: want a header "+
			"line naming the columns"))
	}
	if err != nil {
		return p.readErr(err)
	}
	p.headerLine, _ = p.r.FieldPos(0)
	p.col = map[string]int{}
	for i, c := range rec {
		line, column := p.r.FieldPos(i)
		if !slices.Contains(requiredColumns, c) &&
			!slices.Contains(optionalColumns, c) {
			return p.errAt(line, column, "header", fmt.Errorf("unknown "+
				"column %s (known: %v and optional %v)", quote.Q(c),
				requiredColumns, optionalColumns))
		}
		if _, dup := p.col[c]; dup {
			return p.errAt(line, column, "header",
				fmt.Errorf("column %s given twice", quote.Q(c)))
		}
		p.col[c] = i
		p.names = append(p.names, c)
	}
	for _, c := range requiredColumns {
		if _, ok := p.col[c]; !ok {
			return p.errAt(p.headerLine, 1, "header",
				fmt.Errorf("missing required column %q", c))
		}
	}
	return nil
}

// fields maps the trace format's column (key) names to g's fields, by
// type; both parsers fill a GEMM through it.
func (g *GEMM) fields() (map[string]*int, map[string]*string, map[string]encoding.TextUnmarshaler) {
	return map[string]*int{"m": &g.M, "n": &g.N, "k": &g.K,
			"count": &g.Count, "batch": &g.Batch, "unpadded_m": &g.UnpaddedM,
			"unpadded_k": &g.UnpaddedK},
		map[string]*string{"name": &g.Name,
			"sparsity": &g.Sparsity, "weights": &g.Weights, "note": &g.Note,
			"sparse_operand": &g.SparseOperand, "layout": &g.Layout},
		map[string]encoding.TextUnmarshaler{"precision": &g.Precision}
}

// row reads one GEMM; io.EOF at the end.
func (p *csvParser) row() (GEMM, error) {
	rec, err := p.r.Read()
	if err == io.EOF {
		return GEMM{}, io.EOF
	}
	if errors.Is(err, csv.ErrFieldCount) {
		line, _ := p.r.FieldPos(0)
		return GEMM{}, p.errAt(line, 1, "", fmt.Errorf("wrong number of fields: "+
			"expected %d (the header's columns), got %d", len(p.names), len(rec)))
	}
	if err != nil {
		return GEMM{}, p.readErr(err)
	}
	var g GEMM
	ints, strs, texts := g.fields()
	for i, c := range p.names {
		v := rec[i]
		line, column := p.r.FieldPos(i)
		if v == "" && slices.Contains(requiredColumns, c) {
			return GEMM{}, p.errAt(line, column, c,
				errors.New("empty value in a required column"))
		}
		if s, ok := strs[c]; ok {
			*s = v
			continue
		}
		if t, ok := texts[c]; ok {
			if err := t.UnmarshalText([]byte(v)); err != nil {
				return GEMM{}, p.errAt(line, column, c, err)
			}
			continue
		}
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return GEMM{}, p.errAt(line, column, c,
				fmt.Errorf("%s is not a whole number", quote.Q(v)))
		}
		*ints[c] = n
	}
	if fe := g.check(); fe != nil {
		line, column := p.r.FieldPos(p.col[fe.field])
		return GEMM{}, p.errAt(line, column, fe.field, fe.err)
	}
	return g, nil
}

// WriteCSV writes the trace in the CSV format ParseCSV reads, all columns
// present, one '#' comment line first naming the trace.
func (t *Trace) WriteCSV(w io.Writer) error {
	return t.WriteCSVProvenance(w, nil)
}

// WriteCSVProvenance is WriteCSV with, when p is not nil, a second
// comment line "# provenance: " and p as one line of JSON (which escapes
// every line break), so the file stays a trace ParseCSV reads.
func (t *Trace) WriteCSVProvenance(w io.Writer, p *TraceProvenance) error {
	if _, err := fmt.Fprintf(w, "# stcsim trace %s\n", sanitizeComment(t.Name)); err != nil {
		return fmt.Errorf("write trace %s: %w", t.Name, err)
	}
	if p != nil {
		var js bytes.Buffer
		js.WriteString("# provenance: ")
		enc := json.NewEncoder(&js) // one line, newline-terminated
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("write trace %s: provenance: %w", t.Name, err)
		}
		if _, err := w.Write(js.Bytes()); err != nil {
			return fmt.Errorf("write trace %s: %w", t.Name, err)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(append(slices.Clone(requiredColumns), optionalColumns...)); err != nil {
		return fmt.Errorf("write trace %s: %w", t.Name, err)
	}
	for _, g := range t.GEMMs {
		rec := []string{g.Name, strconv.Itoa(g.M), strconv.Itoa(g.N),
			strconv.Itoa(g.K), g.Precision.String(), g.Sparsity,
			strconv.Itoa(g.Count), strconv.Itoa(g.Batch), g.Weights, g.Note,
			optInt(g.UnpaddedM), optInt(g.UnpaddedK), g.SparseOperand, g.Layout}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write trace %s: %w", t.Name, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write trace %s: %w", t.Name, err)
	}
	return nil
}

func optInt(v int) string {
	if v == 0 {
		return ""
	}
	return strconv.Itoa(v)
}

func sanitizeComment(s string) string {
	b := []rune(s)
	for i, r := range b {
		if r == '\n' || r == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}
