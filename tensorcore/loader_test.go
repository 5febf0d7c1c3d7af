package tensorcore_test

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
)

func init() {
	tensorcore.LoadConfig = func(name string) (tensorcore.Config, error) {
		ld, err := configs.Load([]string{name}, nil)
		if err != nil {
			return tensorcore.Config{}, err
		}
		return ld.Config.TensorCore, nil
	}
}
