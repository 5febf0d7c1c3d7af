package report

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
)

// WritePlots draws the run's plots into dir and returns their file names.
// (Being written under issue 7; until then no plots are drawn.)
func WritePlots(dir string, rep *sim.Report, cfg *configs.Config) ([]string, error) {
	return nil, nil
}
