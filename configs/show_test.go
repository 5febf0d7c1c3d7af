package configs

import "testing"

func TestBuiltinLoad(t *testing.T) {
	for _, n := range Builtin() {
		ld, err := Load([]string{n}, nil)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if ld.Config.Name != n {
			t.Errorf("%s: name %q", n, ld.Config.Name)
		}
	}
}
