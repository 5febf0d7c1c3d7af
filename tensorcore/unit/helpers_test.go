package unit

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
)

// a100 is the a100-40gb tensor-core section at the given fidelity, through
// the real config loader.
func a100(fidelity string) tensorcore.Config {
	ld, err := configs.Load([]string{"a100-40gb"}, nil)
	if err != nil {
		panic(err)
	}
	cfg := ld.Config.TensorCore
	cfg.Fidelity = fidelity
	return cfg
}
