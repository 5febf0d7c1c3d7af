package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
)

// mustPrepare is Prepare for a job the test knows is valid.
func mustPrepare(t testing.TB, cfg *configs.Config, job Job) *Prepared {
	t.Helper()
	p, err := Prepare(cfg, job)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
