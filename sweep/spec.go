package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
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
	// Model is a built-in network name, with Batch, Seq (BERT) and
	// Resolution (ResNet); the grid's workload.batch, workload.seq and
	// workload.resolution axes vary them per point.
	Model      string `yaml:"model"`
	Batch      int    `yaml:"batch"`
	Seq        int    `yaml:"seq"`
	Resolution int    `yaml:"resolution"`
	// Phase (prefill or decode) and Context (decode: cached tokens) are
	// the decoder LLMs' options; workload.context varies Context.
	Phase   string `yaml:"phase"`
	Context int    `yaml:"context"`
	// Layers keeps only the rows whose name matches this regular
	// expression (as run --layer), for any kind of workload.
	Layers string `yaml:"layers"`
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
// decoder's KnownFields) and records the line for error messages. Text
// keys take a scalar, gemms a list of scalars, and batch and seq the
// rule of an integer config key (decimal digits, 1..workloads.MaxDim),
// as the --batch and --seq flags: 1.9 is not read as 1, 0 not as the
// default.
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
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: unknown workload key %s (allowed: %s)",
				k.Line, configs.Quote(k.Value), strings.Join(keys, ", "))
		}
		var err error
		switch k.Value {
		case "batch", "seq", "resolution", "context":
			_, err = checkWorkloadOption(k.Value, v)
		case "gemms":
			err = wantList(v)
		default:
			err = wantScalar(v)
		}
		if err != nil {
			return fmt.Errorf("line %d: %s: %v", v.Line, k.Value, err)
		}
	}
	var p plain
	if err := n.Decode(&p); err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*w = WorkloadSpec(p)
	w.line = n.Line
	return nil
}

// workloadOptions are the built-in models' options a sweep may set on a
// workload or vary in the grid as workload.NAME, with their bounds.
var workloadOptions = map[string]int{"batch": workloads.MaxDim, "seq": workloads.MaxDim,
	"resolution": workloads.MaxResolution, "context": workloads.MaxDim}

// checkWorkloadOption reads a workload option's value by the rule of an
// integer config key (decimal digits, 1..its bound), as the --batch,
// --seq and --resolution flags: 1.9 is not read as 1, 0 not as the
// default.
func checkWorkloadOption(name string, v *yaml.Node) (int, error) {
	x, err := configs.CheckWholeNumber(v)
	if err == nil && (x < 1 || x > workloadOptions[name]) {
		err = fmt.Errorf("must be in [1, %d], got %d (leave %s "+
			"out for the default)", workloadOptions[name], x, name)
	}
	return x, err
}

// wantScalar refuses a mapping or a list where a single value belongs.
func wantScalar(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("wrong type: want a single value, got %s", kindOf(n))
	}
	return nil
}

// wantList accepts a list of single values (or null, for none).
func wantList(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("wrong type: want a list, got %s", kindOf(n))
	}
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: wrong type: want a list of single "+
				"values, got %s in it", c.Line, kindOf(c))
		}
	}
	return nil
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return configs.Quote(n.Value)
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

// Load reads and checks a sweep file: a regular file of at most
// configs.MaxFileBytes of YAML text, as a config file. Config keys and
// values are checked later, per point, by Plan.
func Load(path string) (*Spec, error) {
	data, err := configs.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", quote.Path(path), bare(err))
	}
	return Parse(data, path)
}

// bare drops the operation and path of a *fs.PathError: the message
// names the file already.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// specKeys are the top-level keys of a sweep file and what each holds.
var specKeys = map[string]func(*yaml.Node) error{
	"name": wantScalar, "configs": wantList, "set": wantList,
	"modes": wantList, "workloads": wantNodes(yaml.SequenceNode, "a list"),
	"grid": wantNodes(yaml.MappingNode, "a mapping"),
	"zip":  wantNodes(yaml.SequenceNode, "a list"),
}

// wantNodes accepts a node of one kind (or null, for none).
func wantNodes(kind yaml.Kind, name string) func(*yaml.Node) error {
	return func(n *yaml.Node) error {
		if n.Kind == kind || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			return nil
		}
		return fmt.Errorf("wrong type: want %s, got %s", name, kindOf(n))
	}
}

// Parse reads a sweep from data; path names it in errors and anchors
// relative paths. The text must hold one YAML document, a mapping with
// no repeated key (configs.ParseDocument, as a config file) and only the
// keys of a sweep.
func Parse(data []byte, path string) (*Spec, error) {
	s := &Spec{dir: filepath.Dir(path), file: path}
	root, err := configs.ParseDocument(data, path)
	if err != nil {
		return nil, fmt.Errorf("sweep %w", err)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		want, ok := specKeys[k.Value]
		if !ok {
			return nil, fmt.Errorf("sweep %s: line %d: unknown key %s "+
				"(allowed here: %s)", path, k.Line, configs.Quote(k.Value),
				strings.Join(slices.Sorted(maps.Keys(specKeys)), ", "))
		}
		if err := want(v); err != nil {
			return nil, fmt.Errorf("sweep %s: line %d: %s: %v", path,
				v.Line, k.Value, err)
		}
	}
	if err := root.Decode(s); err != nil {
		return nil, fmt.Errorf("sweep %s: %v", path, yamlError(err))
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("sweep %s: %w", path, err)
	}
	return s, nil
}

// yamlError renders a decoding error without the yaml package's
// "yaml: unmarshal errors:" preamble: its first message, which names the
// line.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return errors.New(strings.TrimSpace(te.Errors[0]))
	}
	return err
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
			return fmt.Errorf("modes: %s listed twice", quote.Q(name))
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
	if err := s.checkWorkloadAxes(); err != nil {
		return err
	}
	// A set: override of a varied key would be overridden by every
	// point's value: it would read as applied and change nothing.
	for i, kv := range s.Set {
		key, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.TrimSpace(key), point.WorkloadAxis) {
			return fmt.Errorf("set[%d]: %s is a workload option: give it on the "+
				"workload (batch:, seq:, resolution:) or vary it in the grid", i, strings.TrimSpace(key))
		}
		if l, ok := seenKey[strings.TrimSpace(key)]; ok {
			return fmt.Errorf("set[%d]: %s is also varied (line %d): every point "+
				"overrides it; drop it from set", i, strings.TrimSpace(key), l)
		}
	}
	return nil
}

// checkWorkloadAxes checks the grid's workload.NAME axes: a known
// option, whole-number values in its bounds, read by at least one of the
// sweep's models, and not also fixed on a workload that reads it.
func (s *Spec) checkWorkloadAxes() error {
	axes := append(Axes{}, s.Grid...)
	for _, g := range s.Zip {
		axes = append(axes, g...)
	}
	for _, ax := range axes {
		name, ok := strings.CutPrefix(ax.Key, point.WorkloadAxis)
		if !ok {
			continue
		}
		if _, known := workloadOptions[name]; !known {
			return fmt.Errorf("line %d: grid key %s: unknown workload option "+
				"(workload.batch, workload.seq, workload.resolution, workload.context)", ax.line, ax.Key)
		}
		for _, v := range ax.Values {
			if _, err := checkWorkloadOption(name, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v}); err != nil {
				return fmt.Errorf("line %d: grid key %s: value %s: %v", ax.line, ax.Key, quote.Q(v), err)
			}
		}
		read := false
		for i, w := range s.Workloads {
			if !w.reads(name) {
				continue
			}
			read = true
			if w.option(name) != 0 {
				return fmt.Errorf("line %d: workloads[%d] sets %s, which grid key %s "+
					"(line %d) varies: leave it out of the workload", w.line, i, name, ax.Key, ax.line)
			}
		}
		if !read {
			return fmt.Errorf("line %d: grid key %s: no model workload of the sweep "+
				"reads %s (it would change nothing)", ax.line, ax.Key, name)
		}
	}
	return nil
}

// option is the workload's own value of a model option (0: the default).
func (w *WorkloadSpec) option(name string) int {
	switch name {
	case "batch":
		return w.Batch
	case "seq":
		return w.Seq
	case "resolution":
		return w.Resolution
	case "context":
		return w.Context
	}
	return 0
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
	if quote.HasControl(w.Name) {
		return fmt.Errorf("name %s holds a control character or invalid UTF-8: "+
			"printable text only", quote.Q(w.Name))
	}
	for _, o := range []struct {
		name string
		v    int
	}{{"batch", w.Batch}, {"seq", w.Seq}, {"resolution", w.Resolution}, {"context", w.Context}} {
		if o.v == 0 {
			continue
		}
		if w.Model == "" {
			return fmt.Errorf("%s applies to a model only (a trace's rows carry their own shapes)", o.name)
		}
		if !w.reads(o.name) {
			return fmt.Errorf("%s: model %s does not read it (it would change nothing)", o.name, w.Model)
		}
	}
	if err := w.checkPhase(); err != nil {
		return err
	}
	if w.Layers != "" {
		if _, err := regexp.Compile(w.Layers); err != nil {
			return fmt.Errorf("layers: not a regular expression: %v", err)
		}
	}
	if len(w.GEMMs) == 0 && (w.Precision != "" || w.Sparsity != "") {
		return fmt.Errorf("precision and sparsity apply to a gemms list only")
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

// reads says whether the workload's model reads an option: a decoder
// LLM reads seq at prefill and context at decode (workloads.Reads says
// what the model reads at some phase).
func (w *WorkloadSpec) reads(name string) bool {
	if w.Model == "" || !workloads.Reads(w.Model, name) {
		return false
	}
	if !workloads.IsLLM(w.Model) {
		return true
	}
	switch name {
	case "seq":
		return w.Phase != workloads.PhaseDecode
	case "context":
		return w.Phase == workloads.PhaseDecode
	}
	return true
}

// checkPhase checks phase: a decoder LLM's, prefill or decode.
func (w *WorkloadSpec) checkPhase() error {
	if w.Phase == "" {
		return nil
	}
	if !workloads.IsLLM(w.Model) {
		return fmt.Errorf("phase applies to the decoder LLMs (%s)", strings.Join(workloads.LLMs(), ", "))
	}
	if w.Phase != workloads.PhasePrefill && w.Phase != workloads.PhaseDecode {
		return fmt.Errorf("phase %s: want %s or %s", configs.Quote(w.Phase),
			workloads.PhasePrefill, workloads.PhaseDecode)
	}
	return nil
}
