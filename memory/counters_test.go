package memory

import (
	"testing"

	"github.com/stcsim/stcsim/internal/counterstest"
)

// TestStatsCountersCoverEveryField: a counter added to Stats and not to
// Counters would be left out of every extension of a run.
func TestStatsCountersCoverEveryField(t *testing.T) {
	counterstest.Covers(t, &Stats{}, (*Stats).Counters)
}
