package report

import (
	"math"
	"reflect"
	"testing"

	"github.com/stcsim/stcsim/results"
)

// The breakdown plot's stacked parts cover every cause of results.Breakdown
// once: with each cause set alone to 1, exactly one part reads 1.
func TestBreakdownPartsCoverEveryCause(t *testing.T) {
	v := reflect.ValueOf(&results.Breakdown{}).Elem()
	for i := 0; i < v.NumField(); i++ {
		var b results.Breakdown
		reflect.ValueOf(&b).Elem().Field(i).SetFloat(1)
		sum := 0.0
		for _, p := range breakdownParts {
			sum += p.get(b)
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("cause %s: the plot's parts sum to %g, want 1", v.Type().Field(i).Name, sum)
		}
	}
}
