package sweep

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/stcsim/stcsim/tensorcore"
)

// Spec is a parsed sweep file.
type Spec struct {
	// Name labels the sweep in logs.
	Name string `yaml:"name"`
	// Configs are the base config and overlays (built-in names or paths
	// relative to the sweep file), as --config.
	Configs []string `yaml:"configs"`
	// Set are overrides applied to every point, as --set key=value.
	Set []string `yaml:"set"`
	// Workloads are what every point runs.
	Workloads []WorkloadSpec `yaml:"workloads"`
	// Modes are "dense" and/or "sparse"; both by default.
	Modes []string `yaml:"modes"`
	// Grid maps config keys to the values to try; the points are the
	// cartesian product of all axes, in file order (first key slowest).
	Grid Axes `yaml:"grid"`
	// Zip lists groups of keys whose value lists vary together: each group
	// is one axis of the product.
	Zip []Axes `yaml:"zip"`

	// dir is the sweep file's directory, against which paths resolve.
	dir  string
	file string
	// modes are Modes, parsed.
	modes []tensorcore.Mode
}

// WorkloadSpec is one workload of a sweep: a named model, a trace file or
// a list of GEMM shapes (exactly one of Model, Trace, GEMMs).
type WorkloadSpec struct {
	// Model is a built-in network name, with Batch and Seq.
	Model string `yaml:"model"`
	Batch int    `yaml:"batch"`
	Seq   int    `yaml:"seq"`
	// Trace is a workload trace file (relative to the sweep file).
	Trace string `yaml:"trace"`
	// GEMMs are shapes "MxNxK"; Name labels the list (default "gemms").
	GEMMs     []string `yaml:"gemms"`
	Name      string   `yaml:"name"`
	Precision string   `yaml:"precision"` // of a GEMM list; default fp16
	Sparsity  string   `yaml:"sparsity"`  // of a GEMM list; default 2:4

	line int
}

// Axis is one config key and the values it takes, each rendered as the
// value of a --set override.
type Axis struct {
	Key    string
	Values []string
	line   int
}

// Axes is an ordered mapping of config keys to value lists.
type Axes []Axis

// UnmarshalYAML keeps the file order of the keys, which fixes the order of
// the points.
func (a *Axes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of config keys to "+
			"value lists", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("line %d: grid key %s: want a non-empty list "+
				"of values", k.Line, k.Value)
		}
		ax := Axis{Key: k.Value, line: k.Line}
		for _, c := range v.Content {
			s, err := renderValue(c)
			if err != nil {
				return fmt.Errorf("line %d: grid key %s: %v", c.Line, k.Value, err)
			}
			ax.Values = append(ax.Values, s)
		}
		*a = append(*a, ax)
	}
	return nil
}

// UnmarshalYAML decodes strictly (node.Decode does not inherit the
// decoder's KnownFields) and records the line for error messages.
func (w *WorkloadSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain WorkloadSpec
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a workload is a mapping (model:, "+
			"trace: or gemms:)", n.Line)
	}
	var keys []string
	t := reflect.TypeOf(plain{})
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" {
			keys = append(keys, tag)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: unknown workload key %q (allowed: %s)",
				k.Line, k.Value, strings.Join(keys, ", "))
		}
	}
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*w = WorkloadSpec(p)
	w.line = n.Line
	return nil
}

// renderValue turns a YAML value into the text of a --set value: a scalar
// as written, a list as a flow sequence.
func renderValue(n *yaml.Node) (string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return "", fmt.Errorf("nested lists are not supported")
			}
			parts[i] = c.Value
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return "", fmt.Errorf("want a scalar or a list of scalars")
}

// Load reads and checks a sweep file. Config keys and values are checked
// later, per point, by Plan.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sweep: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a sweep from data; path names it in errors and anchors
// relative paths.
func Parse(data []byte, path string) (*Spec, error) {
	s := &Spec{dir: filepath.Dir(path), file: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("sweep %s: %w", path, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("sweep %s: %w", path, err)
	}
	return s, nil
}

func (s *Spec) check() error {
	if s.Modes != nil && len(s.Modes) == 0 {
		return fmt.Errorf("modes: empty list (leave modes out for dense " +
			"and sparse)")
	}
	if len(s.Modes) == 0 {
		s.Modes = tensorcore.ModeNames()
	}
	seenMode := map[tensorcore.Mode]bool{}
	for _, name := range s.Modes {
		m, err := tensorcore.ParseMode(name)
		if err != nil {
			return fmt.Errorf("modes: %w", err)
		}
		if seenMode[m] {
			return fmt.Errorf("modes: %q listed twice", name)
		}
		seenMode[m] = true
		s.modes = append(s.modes, m)
	}
	if len(s.Workloads) == 0 {
		return fmt.Errorf("workloads: must list at least one workload")
	}
	for i := range s.Workloads {
		if err := s.Workloads[i].check(); err != nil {
			return fmt.Errorf("line %d: workloads[%d]: %w",
				s.Workloads[i].line, i, err)
		}
	}
	seenKey := map[string]int{}
	for _, ax := range s.Grid {
		if l, ok := seenKey[ax.Key]; ok {
			return fmt.Errorf("line %d: grid key %s already varied at line %d",
				ax.line, ax.Key, l)
		}
		seenKey[ax.Key] = ax.line
	}
	for gi, group := range s.Zip {
		if len(group) == 0 {
			return fmt.Errorf("zip[%d]: empty group", gi)
		}
		for _, ax := range group {
			if l, ok := seenKey[ax.Key]; ok {
				return fmt.Errorf("line %d: zip key %s already varied at "+
					"line %d", ax.line, ax.Key, l)
			}
			seenKey[ax.Key] = ax.line
			if len(ax.Values) != len(group[0].Values) {
				return fmt.Errorf("line %d: zip[%d]: key %s has %d values, "+
					"%s has %d: zipped lists must have equal length", ax.line,
					gi, ax.Key, len(ax.Values), group[0].Key,
					len(group[0].Values))
			}
		}
	}
	return nil
}

func (w *WorkloadSpec) check() error {
	kinds := 0
	for _, set := range []bool{w.Model != "", w.Trace != "", len(w.GEMMs) > 0} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("want exactly one of model, trace or gemms")
	}
	if w.Model == "" && (w.Batch != 0 || w.Seq != 0) {
		return fmt.Errorf("batch and seq apply to a model only")
	}
	if len(w.GEMMs) == 0 && (w.Precision != "" || w.Sparsity != "") {
		return fmt.Errorf("precision and sparsity apply to a gemms list only")
	}
	if w.Batch < 0 || w.Seq < 0 {
		return fmt.Errorf("batch and seq must not be negative")
	}
	return nil
}

// ConfigSpecs are the spec's --config arguments with file paths resolved
// against the sweep file's directory.
func (s *Spec) ConfigSpecs() []string {
	out := make([]string, len(s.Configs))
	for i, c := range s.Configs {
		out[i] = s.resolve(c)
	}
	return out
}

// resolve anchors a relative file path at the sweep file; a bare name
// (no slash or dot) is a built-in config and stays as it is.
func (s *Spec) resolve(p string) string {
	if filepath.IsAbs(p) || !strings.ContainsAny(p, "/.") {
		return p
	}
	return filepath.Join(s.dir, p)
}

// Label names the sweep: its name, or the sweep file's base name.
func (s *Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return strings.TrimSuffix(filepath.Base(s.file), filepath.Ext(s.file))
}
