package memory

import (
	"fmt"
	"testing"
)

// LoadConfig returns the memory sections of a built-in config. The tests
// of this package cannot import configs (configs imports memory), so
// loader_test.go, in the external test package, sets it to configs.Load:
// every test config comes through the real loader.
var LoadConfig func(name string) (Config, error)

// testConfig is LoadConfig for a test.
func testConfig(t testing.TB, name string) Config {
	t.Helper()
	cfg, err := LoadConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func fmtSscan(s string, v *float64) (int, error) { return fmt.Sscan(s, v) }
