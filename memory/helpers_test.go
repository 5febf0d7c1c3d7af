package memory

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// testConfig reads the memory sections of a built-in config (and its
// base) without importing configs (which imports this package).
func testConfig(t testing.TB, name string) Config {
	t.Helper()
	var cfg Config
	var load func(string)
	load = func(n string) {
		b, err := os.ReadFile(filepath.Join("..", "configs", n+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Base string `yaml:"base"`
		}
		if err := yaml.Unmarshal(b, &head); err != nil {
			t.Fatal(err)
		}
		if head.Base != "" {
			load(head.Base)
		}
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	load(name)
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Fatalf("config %s: %v", name, errs)
	}
	return cfg
}

func fmtSscan(s string, v *float64) (int, error) { return fmt.Sscan(s, v) }
