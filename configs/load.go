package configs

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/area"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/internal/check"
	"github.com/stcsim/stcsim/tensorcore"
)

//go:embed *.yaml
var builtin embed.FS

// Default is the config used when none is named.
const Default = "a100-40gb"

// Builtin lists the names of the embedded GPU configs.
func Builtin() []string {
	entries, _ := builtin.ReadDir(".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// BuiltinSource returns the YAML text of an embedded config.
func BuiltinSource(name string) ([]byte, bool) {
	b, err := builtin.ReadFile(name + ".yaml")
	return b, err == nil
}

// Error is a config that could not be loaded: every problem found, each
// naming where it came from.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return "invalid config:\n  " + strings.Join(e.Problems, "\n  ")
}

// pos is where a key's value came from.
type pos struct {
	file string
	line int
	note string // the line comment of the key, where it names a source
}

func (p pos) String() string {
	if p.line == 0 {
		return p.file
	}
	return fmt.Sprintf("%s:%d", p.file, p.line)
}

// Loaded is an effective config plus where each value came from.
type Loaded struct {
	Config  *Config
	Sources []string // the --config names/paths, then the --set overrides
	// Files are the config files read, in merge order (a base before the
	// file naming it), with the SHA-256 of their bytes.
	Files   []SourceFile
	origin  map[string]pos
	tree    *yaml.Node
	depth   int
	encoded *yaml.Node // Config as YAML, for Value
}

// Load reads configs in order (each a built-in name or a file path; the
// first is the base, the rest overlay it), applies key=value overrides and
// validates the result. With no specs it loads Default.
func Load(specs []string, sets []string) (*Loaded, error) {
	if len(specs) == 0 {
		specs = []string{Default}
	}
	ld := &Loaded{origin: map[string]pos{}}
	var problems []string
	for _, spec := range specs {
		if err := ld.mergeSource(spec); err != nil {
			problems = append(problems, err.Error())
		}
	}
	for _, s := range sets {
		if err := ld.applySet(s); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return ld, ld.finish(specs, sets)
}

func (ld *Loaded) finish(specs, sets []string) error {
	cfg := &Config{}
	// Every node of the tree was checked against the schema when its
	// file or --set was read (checkNode: known keys, types, number
	// forms), so it decodes as it is (a sweep loads a config per point).
	if err := ld.tree.Decode(cfg); err != nil {
		return &Error{Problems: []string{err.Error()}}
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return &Error{Problems: ld.describe(errs)}
	}
	if err := cfg.derivePaths(); err != nil {
		return &Error{Problems: []string{err.Error()}}
	}
	ld.Config = cfg
	ld.Sources = append(append([]string{}, specs...), setLabels(sets)...)
	return nil
}

func setLabels(sets []string) []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			s = Quote(s) // never a raw control character in a message
		}
		out[i] = "--set " + s
	}
	return out
}

// maxMissingListed is how many keys missing from every config are named
// one by one; past it they are summarised with a hint, since a partial
// file loaded on its own misses most of the schema.
const maxMissingListed = 5

// describe turns validation errors into messages with file and line.
func (ld *Loaded) describe(errs check.List) []string {
	out := make([]string, 0, len(errs))
	var missing, msgs []string
	for _, e := range errs {
		where, ok := ld.lookup(e.Path)
		if !ok {
			missing = append(missing, e.Path)
			msgs = append(msgs, fmt.Sprintf("key %s: missing from every "+
				"config (%s)", e.Path, e.Msg))
			continue
		}
		msg := fmt.Sprintf("%s: key %s: %s", where, e.Path, e.Msg)
		// Name where the other keys were set when that is another
		// source (a --set or a later file of them is what the user
		// changed).
		var also []string
		for _, w := range e.With {
			w = strings.TrimPrefix(w, "/")
			if o, ok := ld.lookup(w); ok && o.file != where.file {
				also = append(also, w+" from "+o.String())
			}
		}
		if len(also) > 0 {
			msg += " (" + strings.Join(also, "; ") + ")"
		}
		out = append(out, msg)
	}
	if len(missing) <= maxMissingListed {
		return append(out, msgs...)
	}
	return append(out, fmt.Sprintf("%d keys are missing from every config "+
		"(%s, ...): a file that sets only some keys needs `base: %s` in it, "+
		"or to follow a full config (--config %s --config FILE)",
		len(missing), strings.Join(missing[:maxMissingListed], ", "),
		Default, Default))
}

// lookup finds the origin of a path or of its nearest set ancestor.
func (ld *Loaded) lookup(path string) (pos, bool) {
	for p := path; p != ""; p = parent(p) {
		if o, ok := ld.origin[p]; ok {
			return o, true
		}
	}
	return pos{}, false
}

func parent(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}

// Origin says where the value of a key came from ("file:line" or the
// --set flag).
func (ld *Loaded) Origin(path string) string {
	o, ok := ld.lookup(path)
	if !ok {
		return "unset"
	}
	return o.String()
}

func (ld *Loaded) mergeSource(spec string) error {
	data, label, err := readSource(spec)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	root, err := checkedDocument(data, label, sum)
	if err != nil {
		return err
	}
	if err := ld.mergeBase(spec, label, root); err != nil {
		return err
	}
	ld.Files = append(ld.Files, SourceFile{Source: label,
		SHA256: hex.EncodeToString(sum[:])})
	ld.record(label, root, "")
	if ld.tree == nil {
		ld.tree = root
		return nil
	}
	mergeNode(ld.tree, root)
	return nil
}

// mergeBase loads the config named by a "base:" key before the file that
// names it, and drops the key.
func (ld *Loaded) mergeBase(spec, label string, root *yaml.Node) error {
	j := findKey(root, "base")
	if j < 0 {
		return nil
	}
	bn := root.Content[j+1]
	if bn.Kind != yaml.ScalarNode || bn.Value == "" {
		return fmt.Errorf("%s:%d: key base: want a config name or path",
			label, bn.Line)
	}
	base := bn.Value
	root.Content = append(root.Content[:j], root.Content[j+2:]...)
	ld.depth++
	defer func() { ld.depth-- }()
	if ld.depth > 8 {
		return fmt.Errorf("%s: base chain too deep (a cycle?)", label)
	}
	if _, ok := BuiltinSource(base); !ok && !filepath.IsAbs(base) {
		base = filepath.Join(filepath.Dir(spec), base)
	}
	if err := ld.mergeSource(base); err != nil {
		return fmt.Errorf("%s: base %s: %w", label, Quote(base), err)
	}
	return nil
}

func readSource(spec string) ([]byte, string, error) {
	if b, ok := BuiltinSource(spec); ok && !strings.ContainsAny(spec, "/.") {
		return b, spec + ".yaml (built-in)", nil
	}
	if _, err := os.Stat(spec); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the message quotes the path already
		}
		return nil, spec, fmt.Errorf("config %s: not a built-in config "+
			"(%s) and not a readable file: %v", Quote(spec),
			strings.Join(Builtin(), ", "), err)
	}
	b, err := ReadFile(spec)
	if err != nil {
		return nil, spec, fmt.Errorf("config %s: %v", Quote(spec), err)
	}
	return b, spec, nil
}

// record notes the origin of every key under n.
func (ld *Loaded) record(label string, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinPath(path, k.Value)
			note := strings.TrimSpace(strings.TrimPrefix(v.LineComment, "#"))
			if note == "" {
				note = strings.TrimSpace(strings.TrimPrefix(k.LineComment, "#"))
			}
			ld.origin[p] = pos{file: label, line: k.Line, note: note}
			ld.record(label, v, p)
		}
	case yaml.SequenceNode:
		// A list replaces the base's whole list: forget where the base's
		// items (past this list's end too) came from.
		for q := range ld.origin {
			if strings.HasPrefix(q, path+"[") {
				delete(ld.origin, q)
			}
		}
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			note := strings.TrimSpace(strings.TrimPrefix(v.LineComment, "#"))
			ld.origin[p] = pos{file: label, line: v.Line, note: note}
			ld.record(label, v, p)
		}
	}
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// mergeNode overlays src onto dst: mappings merge key by key, anything
// else (scalars, lists) is replaced.
func mergeNode(dst, src *yaml.Node) {
	if dst.Kind != yaml.MappingNode || src.Kind != yaml.MappingNode {
		*dst = *src
		return
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		if j := findKey(dst, k.Value); j >= 0 {
			mergeNode(dst.Content[j+1], v)
			continue
		}
		dst.Content = append(dst.Content, k, v)
	}
}

func findKey(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// Note is the comment on the line that set a key (its source or why it
// is estimated), or "" when that line has none or the key was not set by
// a file.
func (ld *Loaded) Note(path string) string {
	return ld.origin[path].note
}

// SourceFile is one config file a Loaded was read from.
type SourceFile struct {
	Source string `json:"source"` // path, or NAME.yaml (built-in)
	SHA256 string `json:"sha256"`
}

// Hash is the SHA-256 of the effective config (its YAML without the
// sources header): equal for every route to the same values.
func (ld *Loaded) Hash() string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(ld.Config); err != nil {
		panic(fmt.Sprintf("encode config: %v", err))
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// YAML renders the effective config, with a header naming its sources.
func (ld *Loaded) YAML() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# effective stcsim config\n# sources: %s\n"+
		"# sha256 of the values below: %s\n",
		strings.Join(ld.Sources, ", "), ld.Hash())
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(ld.Config); err != nil {
		panic(fmt.Sprintf("encode config: %v", err))
	}
	return b.Bytes()
}

// SimulationHash is the hash of the config as the simulation of a record
// of the mode reads it (the simulation cache's key, sim/cache.go): for
// dense, the fields tagged mode:"sparse" (read only by the sparse path)
// and those tagged dense:"energy" (read by a dense run only through the
// energy model) are zeroed first; under gpu.clock_policy=locked the
// power and area sections are zeroed for every mode, since they set a
// record's energy, power and cost, which are computed again from the
// simulation's counts whenever a record is read, and never its timing
// (under power_capped the power sets the clock, so they stay in). It is
// a hash of the values (valueHash), not of the YAML Hash writes: the
// cache makes one per run and mode, a sweep's dry run one per point.
func (ld *Loaded) SimulationHash(mode tensorcore.Mode) string {
	c := *ld.Config // a copy: the fields zeroed are values in it
	if mode == tensorcore.Dense {
		for _, path := range append(SparseOnlyFields(), DenseEnergyFields()...) {
			zeroField(reflect.ValueOf(&c).Elem(), path)
		}
	}
	if c.GPU.ClockPolicy == energy.Locked {
		c.Power, c.Area = energy.Config{}, area.Config{}
	}
	return valueHash(&c)
}

// SparseOnlyFields are the Go field paths (indices from Config) of the
// fields tagged mode:"sparse", found through nested struct values.
func SparseOnlyFields() [][]int { return taggedFields("mode", "sparse") }

// DenseEnergyFields are the Go field paths of the fields tagged
// dense:"energy": a dense run reads them only through the area layout
// that sets its MMAs' operand-path energy (selector_fan_in: the muxes
// widen the tensor core; docs/area.md), never for its timing.
func DenseEnergyFields() [][]int { return taggedFields("dense", "energy") }

// taggedFields are the Go field paths (indices from Config) of the
// fields whose struct tag key has the value, through nested struct values.
func taggedFields(key, value string) [][]int {
	var out [][]int
	var walk func(t reflect.Type, at []int)
	walk = func(t reflect.Type, at []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			p := append(append([]int{}, at...), i)
			if f.Tag.Get(key) == value {
				out = append(out, p)
			} else if f.Type.Kind() == reflect.Struct {
				walk(f.Type, p)
			}
		}
	}
	walk(reflect.TypeFor[Config](), nil)
	return out
}

// zeroField sets the field at path (struct values only, no pointers) to
// its zero value.
func zeroField(v reflect.Value, path []int) {
	f := v.FieldByIndex(path)
	f.Set(reflect.Zero(f.Type()))
}
