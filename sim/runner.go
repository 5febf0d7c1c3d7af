package sim

import (
	"fmt"

	"github.com/stcsim/stcsim/configs"
)

type runner struct {
	ld  *configs.Loaded
	job Job
}

func newRunner(ld *configs.Loaded, job Job) *runner { return &runner{ld: ld, job: job} }

func (r *runner) run() (*Report, error) {
	return nil, fmt.Errorf("the GPU model is not built yet")
}
