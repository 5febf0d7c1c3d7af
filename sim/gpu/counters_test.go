package gpu

import (
	"testing"

	"github.com/stcsim/stcsim/internal/counterstest"
)

// TestFFSnapCountersCoverEveryField: every counter the fast-forward
// snapshots is extended by it.
func TestFFSnapCountersCoverEveryField(t *testing.T) {
	counterstest.Covers(t, &ffSnap{}, (*ffSnap).counters)
}
