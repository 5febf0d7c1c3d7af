package configs

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// AnnotatedYAML is YAML with every value's source as its line comment:
// the file and line that set it and the comment on that line (or, for a
// value inside a list item or a section set as a whole, the nearest
// enclosing key's comment). `stcsim config show` prints it.
func (ld *Loaded) AnnotatedYAML() ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(ld.Config); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	ld.annotate(&doc, "")
	var b bytes.Buffer
	fmt.Fprintf(&b, "# effective stcsim config, each value with its source (file:line: the comment there)\n"+
		"# sources: %s\n# sha256 of the values below: %s\n",
		strings.Join(ld.Sources, ", "), ld.Hash())
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return b.Bytes(), nil
}

// annotate sets the line comment of every scalar value under n (path
// names n) and of every list item, whose mapping is printed on one line.
func (ld *Loaded) annotate(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinPath(path, k.Value)
			if p == "name" || p == "description" {
				continue // the config's identity, not a modelled value
			}
			if v.Kind == yaml.ScalarNode || (v.Kind == yaml.SequenceNode && scalarList(v)) {
				v.Style |= flowIfSeq(v)
				v.LineComment = ld.SourceOf(p)
				continue
			}
			ld.annotate(v, p)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			v.Style |= yaml.FlowStyle
			v.LineComment = ld.SourceOf(p)
		}
	}
}

func scalarList(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

func flowIfSeq(n *yaml.Node) yaml.Style {
	if n.Kind == yaml.SequenceNode {
		return yaml.FlowStyle
	}
	return 0
}

// SourceOf says where a key's value came from and why: "file:line: the
// comment on that line", the comment of the nearest enclosing key that
// has one where the line itself has none, or "file:line (no source
// comment)".
func (ld *Loaded) SourceOf(path string) string {
	o, ok := ld.lookup(path)
	if !ok {
		return "unset (no source)"
	}
	for p := path; p != ""; p = parent(p) {
		if q, ok := ld.origin[p]; ok && q.note != "" && q.file == o.file {
			return o.String() + ": " + q.note
		}
	}
	return o.String() + " (no source comment)"
}
