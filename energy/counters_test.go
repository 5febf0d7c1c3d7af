package energy

import (
	"testing"

	"github.com/stcsim/stcsim/internal/counterstest"
)

// TestCountersCoverEveryField: a count added to Counts and not to
// Counters would be left out of every extension of a run.
func TestCountersCoverEveryField(t *testing.T) {
	counterstest.Covers(t, &Counts{}, (*Counts).Counters)
}
