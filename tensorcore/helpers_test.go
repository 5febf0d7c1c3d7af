package tensorcore

// LoadConfig returns the tensor-core section of a built-in config. The
// tests of this package cannot import configs (configs imports
// tensorcore), so loader_test.go, in the external test package, sets it to
// configs.Load: every test config comes through the real loader.
var LoadConfig func(name string) (Config, error)

// a100 is the a100-40gb tensor-core section at the given fidelity.
func a100(fidelity string) Config {
	cfg, err := LoadConfig("a100-40gb")
	if err != nil {
		panic(err)
	}
	cfg.Fidelity = fidelity
	return cfg
}
