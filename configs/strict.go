package configs

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/internal/quote"
)

// checkNode walks a parsed YAML tree against the Go type it must decode
// into and reports the first unknown key or wrong type with its file, line
// and full key.
func checkNode(label string, n *yaml.Node, t reflect.Type, path string) error {
	if t.Kind() == reflect.Struct {
		return checkMapping(label, n, t, path)
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		if n.Kind != yaml.SequenceNode {
			return typeError(label, n, path, "a list")
		}
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if err := checkNode(label, c, t.Elem(), p); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return typeError(label, n, path, kindName(t))
	}
	v := reflect.New(t)
	if err := n.Decode(v.Interface()); err != nil {
		return typeError(label, n, path, kindName(t))
	}
	if err := checkScalar(n, v.Elem()); err != nil {
		return fmt.Errorf("%s:%d: key %s: %v", label, n.Line, path, err)
	}
	return nil
}

func typeError(label string, n *yaml.Node, path, want string) error {
	got := n.Value
	switch n.Kind {
	case yaml.ScalarNode:
		got = Quote(got)
	case yaml.AliasNode:
		got = "an alias (*" + n.Value + ")"
	default:
		got = map[yaml.Kind]string{yaml.MappingNode: "a mapping",
			yaml.SequenceNode: "a list", yaml.DocumentNode: "a document"}[n.Kind]
	}
	return fmt.Errorf("%s:%d: key %s: wrong type: want %s, got %s",
		label, n.Line, path, want, got)
}

func checkMapping(label string, n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind != yaml.MappingNode {
		return typeError(label, n, path, "a mapping")
	}
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("%s:%d: unknown key %s (allowed here: %s)",
				label, k.Line, quoteKey(joinPath(path, k.Value)), keyList(fields))
		}
		if err := checkNode(label, v, ft, joinPath(path, k.Value)); err != nil {
			return err
		}
	}
	return nil
}

// yamlFields maps the YAML keys of a struct (following inline fields) to
// their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if opts == "inline" {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func keyList(fields map[string]reflect.Type) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// typeAt resolves a dotted key path (list elements as [i]) to its Go type.
func typeAt(path string) (reflect.Type, error) {
	t := reflect.TypeOf(Config{})
	walked := ""
	for _, part := range strings.Split(path, ".") {
		name, indexed, err := splitPart(part)
		if err != nil {
			return nil, fmt.Errorf("key %s: %v", quoteKey(path), err)
		}
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("key %s: %s is %s and has no keys "+
				"below it", quoteKey(path), walked, kindName(t))
		}
		fields := yamlFields(t)
		ft, ok := fields[name]
		if !ok {
			return nil, fmt.Errorf("unknown key %s (allowed after %q: %s)",
				quoteKey(joinPath(walked, name)), walked, keyList(fields))
		}
		t = ft
		walked = joinPath(walked, name)
		if indexed >= 0 {
			if t.Kind() != reflect.Slice {
				return nil, fmt.Errorf("key %s is not a list", walked)
			}
			t = t.Elem()
			walked += fmt.Sprintf("[%d]", indexed)
		}
	}
	return t, nil
}

// splitPart reads one part of a key path: a name, optionally followed by
// one list index [i]; indexed is -1 without one.
func splitPart(part string) (name string, indexed int, err error) {
	name, idx, hasIdx := strings.Cut(part, "[")
	if name == "" {
		return "", 0, fmt.Errorf("empty key name (a leading, trailing " +
			"or doubled dot?)")
	}
	if !hasIdx {
		return name, -1, nil
	}
	digits, ok := strings.CutSuffix(idx, "]")
	if !ok || !isDecimal(digits) || strings.HasPrefix(digits, "-") ||
		strings.HasPrefix(digits, "+") || len(digits) > 6 {
		return "", 0, fmt.Errorf("list index of %s: want one [i] with i "+
			"a whole number, like %s[0]", name, name)
	}
	fmt.Sscanf(digits, "%d", &indexed)
	return name, indexed, nil
}

// quoteKey renders a key for a message, cut to a few bytes.
func quoteKey(k string) string {
	if len(k) <= quote.Max && utf8.ValidString(k) {
		return k
	}
	return Quote(k)
}

// quoteSet renders a --set KEY=VALUE for a message: quoted whole when
// short, else its key and its value each quoted on its own, so that a
// cut never falls inside the value (a 46-byte --set ending in =128 was
// shown as ...=1).
func quoteSet(kv string) string {
	key, value, ok := strings.Cut(kv, "=")
	if len(kv) <= quote.Max || !ok {
		return Quote(kv)
	}
	return Quote(key) + "=" + Quote(value)
}

// setText is a --set as a config origin names it ("--set KEY=VALUE" in
// messages about its key): as given when short and printable, else as
// quoteSet renders it.
func setText(kv string) string {
	if len(kv) <= 2*quote.Max && utf8.ValidString(kv) && !quote.HasControl(kv) {
		return kv
	}
	return quoteSet(kv)
}

// applySet applies one key.path=value override.
func (ld *Loaded) applySet(kv string) error {
	if !utf8.ValidString(kv) {
		return fmt.Errorf("--set %s: not UTF-8 text", quoteSet(kv))
	}
	key, value, ok := strings.Cut(kv, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return fmt.Errorf("--set %s: want key.path=value", quoteSet(kv))
	}
	if key == "base" {
		return fmt.Errorf("--set %s: base is resolved when a file is read; "+
			"give the base config with --config", quoteSet(kv))
	}
	t, err := typeAt(key)
	if err != nil {
		return fmt.Errorf("--set %s: %v", quoteSet(kv), err)
	}
	val, err := parseSetValue(value)
	if err != nil {
		return fmt.Errorf("--set %s: value: %v", quoteSet(kv), err)
	}
	if err := checkNode("--set", val, t, key); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": key "); i >= 0 {
			msg = msg[i+2:]
		}
		return fmt.Errorf("--set %s: value %s is not valid for %s: %s",
			quoteSet(kv), Quote(value), key, msg)
	}
	label := "--set " + setText(kv)
	if ld.tree == nil {
		return fmt.Errorf("--set %s: no config loaded to override", quoteSet(kv))
	}
	if err := setPath(ld.tree, key, val); err != nil {
		return fmt.Errorf("--set %s: %v", quoteSet(kv), err)
	}
	ld.origin[key] = pos{file: label}
	ld.record(label, val, key)
	return nil
}

// parseSetValue reads the value of a --set override as YAML (one
// document, no repeated keys); text that is not YAML is a string.
func parseSetValue(value string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(value))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}, nil
	}
	var next yaml.Node
	if dec.Decode(&next) == nil {
		return nil, fmt.Errorf("holds more than one YAML document")
	}
	val := doc.Content[0]
	if err := checkDuplicates("--set", val, ""); err != nil {
		return nil, err
	}
	return val, nil
}

// setPath puts val at the dotted path, creating mappings as needed.
func setPath(root *yaml.Node, path string, val *yaml.Node) error {
	n := root
	parts := strings.Split(path, ".")
	for i, part := range parts {
		name, idx, hasIdx := strings.Cut(part, "[")
		last := i == len(parts)-1 && !hasIdx
		j := findKey(n, name)
		if j < 0 {
			child := &yaml.Node{Kind: yaml.MappingNode}
			if last {
				child = val
			}
			n.Content = append(n.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Value: name}, child)
			n = child
		} else if last {
			*n.Content[j+1] = *val
		} else {
			n = n.Content[j+1]
		}
		if hasIdx {
			var k int
			if _, err := fmt.Sscanf(idx, "%d]", &k); err != nil ||
				n.Kind != yaml.SequenceNode || k < 0 || k >= len(n.Content) {
				return fmt.Errorf("no list element %s[%s", name, idx)
			}
			if i == len(parts)-1 {
				*n.Content[k] = *val
				return nil
			}
			n = n.Content[k]
		}
	}
	return nil
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		return "a non-negative integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Struct:
		return "a mapping"
	}
	return "a " + t.Kind().String()
}
