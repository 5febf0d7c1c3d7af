package tensorcore_test

import (
	"fmt"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
)

// Keys and Value agree with the YAML encoding of a shipped precision's
// config: the same keys, each with the value the encoding writes.
func TestPrecisionKeysAndValues(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ld.Config.TensorCore.Get(tensorcore.FP16)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	keys := tensorcore.Keys()
	if len(keys) != len(m) {
		t.Errorf("%d keys %v, the YAML has %d", len(keys), keys, len(m))
	}
	for _, k := range keys {
		got, ok := p.Value(k)
		if want, in := m[k]; !ok || !in || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Value(%q) = %v (%v); the YAML has %v (%v)", k, got, ok, want, in)
		}
	}
	if _, ok := p.Value("nonsense"); ok {
		t.Error("Value of an unknown key")
	}
}
