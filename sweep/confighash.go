package sweep

import (
	"bytes"
	"reflect"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/configs"
)

// A point's hash is the SHA-256 of its config's YAML (configYAML), and
// encoding a whole config took most of a sweep's planning time once the
// config was loaded (docs/log/2026-12-04-bad-input.md). The points of a
// sweep differ in a few sections only, so sectionEncoder encodes the
// config one top-level section at a time and reuses a section's text
// while its value is the last one's. The result is yaml.Marshal's text
// byte for byte (TestSectionEncoderIsMarshal); a config it cannot
// splice (a base: left in) is marshalled whole.

// sectionEncoder keeps each top-level section's last value and text.
type sectionEncoder struct {
	mu   sync.Mutex
	last map[string]encodedSection
}

type encodedSection struct {
	value any
	text  []byte
}

func newSectionEncoder() *sectionEncoder {
	return &sectionEncoder{last: map[string]encodedSection{}}
}

// marshal is yaml.Marshal(cfg).
func (e *sectionEncoder) marshal(cfg *configs.Config) ([]byte, error) {
	if cfg.Base != "" {
		return yaml.Marshal(cfg)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out bytes.Buffer
	var err error
	eachSection(reflect.ValueOf(cfg).Elem(), func(key string, v reflect.Value) {
		if err != nil {
			return
		}
		text, ok := e.section(key, v)
		if !ok {
			err = errSplice
			return
		}
		out.WriteString(key)
		out.WriteByte(':')
		if block(v, text) {
			out.WriteByte('\n')
			for _, line := range strings.SplitAfter(string(text), "\n") {
				if line != "" {
					out.WriteString("    ")
					out.WriteString(line)
				}
			}
			return
		}
		out.WriteByte(' ')
		out.Write(text)
	})
	if err != nil {
		return yaml.Marshal(cfg)
	}
	return out.Bytes(), nil
}

type spliceError struct{}

func (spliceError) Error() string { return "section cannot be spliced" }

var errSplice = spliceError{}

// section is the YAML text of one section's value, from the last call
// when the value is the same.
func (e *sectionEncoder) section(key string, v reflect.Value) ([]byte, bool) {
	val := v.Interface()
	if s, ok := e.last[key]; ok && reflect.DeepEqual(s.value, val) {
		return s.text, true
	}
	text, err := yaml.Marshal(val)
	if err != nil {
		return nil, false
	}
	e.last[key] = encodedSection{value: val, text: text}
	return text, true
}

// block says whether a value is written on the lines below its key: a
// struct, map or list not encoded empty (an empty one is {} or [] after
// the key).
func block(v reflect.Value, text []byte) bool {
	switch v.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice:
		return !bytes.HasPrefix(text, []byte("{")) && !bytes.HasPrefix(text, []byte("["))
	}
	return false
}

// eachSection calls f with every top-level key of the config in the
// encoder's order (struct order, inline sections' fields in place),
// leaving out an empty omitempty field.
func eachSection(v reflect.Value, f func(key string, v reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		switch {
		case !sf.IsExported() || tag == "-":
		case strings.Contains(opts, "inline"):
			eachSection(v.Field(i), f)
		case strings.Contains(opts, "omitempty") && v.Field(i).IsZero():
		default:
			if tag == "" {
				tag = strings.ToLower(sf.Name)
			}
			f(tag, v.Field(i))
		}
	}
}
