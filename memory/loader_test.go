package memory_test

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
)

func init() {
	memory.LoadConfig = func(name string) (memory.Config, error) {
		ld, err := configs.Load([]string{name}, nil)
		if err != nil {
			return memory.Config{}, err
		}
		return ld.Config.Memory, nil
	}
}
