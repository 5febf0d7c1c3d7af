package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/stcsim/stcsim/internal/quote"

	"go.yaml.in/yaml/v3"
)

// MaxFileBytes bounds a config file: real configs are a few KB, and a
// bound keeps a device or a huge file named by mistake from being read
// forever.
const MaxFileBytes = 1 << 20

// Quote renders a value for an error message: Go-quoted, cut to a few
// bytes at a character boundary (quote.Q, which readers that do not
// import configs use too).
func Quote(s string) string { return quote.Q(s) }

// ReadFile reads a YAML input file (a config, a sweep): it must be a
// regular file of at most MaxFileBytes of UTF-8 text.
func ReadFile(path string) ([]byte, error) {
	data, err := ReadRegular(path, MaxFileBytes, "a YAML file")
	if err != nil {
		return nil, err
	}
	if err := checkText(data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkText refuses content that is not YAML text before anything of it
// is parsed or quoted.
func checkText(data []byte) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("not a YAML file: not UTF-8 text")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return fmt.Errorf("not a YAML file: holds NUL bytes")
	}
	return nil
}

// yamlLine is how yaml.v3 starts a syntax error: "yaml: line N: ...".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError names a YAML syntax error by file and line, as every other
// message about a file does ("FILE:LINE: ..."), instead of in yaml.v3's
// own words.
func syntaxError(label string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: YAML syntax: %s", label, m[1], m[2])
	}
	return fmt.Errorf("%s: YAML syntax: %s", label, strings.TrimPrefix(msg, "yaml: "))
}

// ParseDocument parses YAML text that must hold exactly one document
// whose top level is a mapping, with no key repeated in any mapping.
// Errors carry the line; label names the file.
func ParseDocument(data []byte, label string) (*yaml.Node, error) {
	if err := checkText(data); err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%s: empty file", label)
		}
		return nil, syntaxError(label, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err != io.EOF {
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		if err != nil {
			return nil, syntaxError(label, err)
		}
		return nil, fmt.Errorf("%s:%d: a second YAML document (after "+
			"---): a file holds one document", label, line)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty file", label)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: not a YAML mapping of keys (like "+
			"`gpu:`); is this the right file?", label, root.Line)
	}
	if err := checkDuplicates(label, root, ""); err != nil {
		return nil, err
	}
	return root, nil
}

// checkDuplicates reports the first key that a mapping repeats.
func checkDuplicates(label string, n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := joinPath(path, k.Value)
			if l, dup := seen[k.Value]; dup {
				return fmt.Errorf("%s:%d: key %s repeated (first at line "+
					"%d)", label, k.Line, quoteKey(p), l)
			}
			seen[k.Value] = k.Line
			if err := checkDuplicates(label, n.Content[i+1], p); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := checkDuplicates(label, c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkScalar enforces what the YAML decoder lets through for a number:
// an integer key takes decimal digits only (1.5 would become 1, 054 the
// octal 44, 0x10 16), and a number is finite; and for a switch: true or
// false only (the decoder also reads YAML 1.1's yes, no, on and off).
func checkScalar(n *yaml.Node, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Bool:
		switch strings.TrimSpace(n.Value) {
		case "true", "True", "TRUE", "false", "False", "FALSE":
		default:
			return fmt.Errorf("want true or false, got %s", Quote(n.Value))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64:
		if !isDecimal(strings.TrimSpace(n.Value)) {
			return fmt.Errorf("want a whole number in decimal digits "+
				"(no fraction, exponent or leading zero), got %s", Quote(n.Value))
		}
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("want a finite number, got %s", Quote(n.Value))
		}
	}
	return nil
}

func isDecimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Value renders the effective value of a key (dotted, list elements as
// [i]) as a --set value: a scalar as YAML writes it, a list of scalars
// in flow style (the config encoded once, on the first call; a Loaded is
// not safe for concurrent Value calls). It is what a sweep stores as a point's grid value, so
// that the stored value is the simulated one.
func (ld *Loaded) Value(path string) (string, bool) {
	// The key's own field encoded alone: the same text as in the whole
	// config's encoding, at a small part of the cost (a sweep asks this
	// of every point's grid keys).
	if f, ok := fieldAt(reflect.ValueOf(ld.Config).Elem(), path); ok {
		var n yaml.Node
		if err := n.Encode(f.Interface()); err == nil {
			return renderValue(&n)
		}
	}
	return ld.encodedValue(path)
}

// encodedValue is Value read from the whole config's encoding.
func (ld *Loaded) encodedValue(path string) (string, bool) {
	if ld.encoded == nil {
		var n yaml.Node
		if err := n.Encode(ld.Config); err != nil {
			return "", false
		}
		ld.encoded = &n
	}
	cur := ld.encoded
	for _, part := range strings.Split(path, ".") {
		name, idx, err := splitPart(part)
		if err != nil || cur.Kind != yaml.MappingNode {
			return "", false
		}
		j := findKey(cur, name)
		if j < 0 {
			return "", false
		}
		cur = cur.Content[j+1]
		if idx >= 0 {
			if cur.Kind != yaml.SequenceNode || idx >= len(cur.Content) {
				return "", false
			}
			cur = cur.Content[idx]
		}
	}
	return renderValue(cur)
}

// renderValue is a node as Value renders it: a scalar, or a list of
// scalars in flow style.
func renderValue(cur *yaml.Node) (string, bool) {
	switch cur.Kind {
	case yaml.ScalarNode:
		return cur.Value, true
	case yaml.SequenceNode:
		parts := make([]string, len(cur.Content))
		for i, c := range cur.Content {
			if c.Kind != yaml.ScalarNode {
				return "", false
			}
			parts[i] = c.Value
		}
		return "[" + strings.Join(parts, ", ") + "]", true
	}
	return "", false
}

// fieldAt is the field of v (a struct) at a dotted key path with [i]
// list indexes, found by the fields' yaml names (inline structs
// searched through); false where the path names no field, or a field
// left out of the encoding when empty (omitempty).
func fieldAt(v reflect.Value, path string) (reflect.Value, bool) {
	for _, part := range strings.Split(path, ".") {
		name, idx, err := splitPart(part)
		if err != nil || v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		if v, err = yamlField(v, name); err != nil {
			return reflect.Value{}, false
		}
		if idx >= 0 {
			if v.Kind() != reflect.Slice || idx >= v.Len() {
				return reflect.Value{}, false
			}
			v = v.Index(idx)
		}
	}
	return v, true
}

var errNoField = errors.New("no such field")

// yamlField is struct v's field of yaml name name.
func yamlField(v reflect.Value, name string) (reflect.Value, error) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case strings.Contains(opts, "inline"):
			if x, err := yamlField(v.Field(i), name); err == nil {
				return x, nil
			}
		case tag == name && f.IsExported():
			if strings.Contains(opts, "omitempty") {
				return reflect.Value{}, errNoField
			}
			return v.Field(i), nil
		}
	}
	return reflect.Value{}, errNoField
}
