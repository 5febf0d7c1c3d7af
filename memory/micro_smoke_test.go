package memory

import (
	"testing"

	"github.com/stcsim/stcsim/sim/clock"
)

func TestMicroSmoke(t *testing.T) {
	cfg := testConfig(t, "a100-80gb")
	res, err := MicroMem(cfg, clock.MHz(1410), 108)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%+v", r)
	}
}
