package fast

import (
	"fmt"
	"math"
)

// Measurement, FamilyError, SuiteError and GEMVError are the stated measurements,
// for the external tests (package fast_test) that hold the tier to them.
type Measurement = measurement

// FamilyError, SuiteError and GEMVError: see Measurement.
var FamilyError, SuiteError, GEMVError = familyError, suiteError, gemvError

// WorstPct is the measurement's largest per-kernel |error|, in percent.
func (e measurement) WorstPct() float64 { return e.worstPct }

// Holds compares per-kernel errors (fractions) with the measurement: a
// line that sums them up, and an error if they fall outside it (to its
// one decimal place) or are not as many as the kernels it measured.
func (e measurement) Holds(errs []float64) (string, error) {
	above := func(x, stated float64) bool { return math.Round(10*x)/10 > stated }
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, x := range errs {
		lo, hi, sum = min(lo, 100*x), max(hi, 100*x), sum+100*math.Abs(x)
	}
	mape := sum / float64(len(errs))
	line := fmt.Sprintf("%s: %d kernels, error %+.2f to %+.2f %%, MAPE %.2f %%", e.what, len(errs), lo, hi, mape)
	if above(max(-lo, hi), e.worstPct) || above(mape, e.mapePct) || above(hi, e.maxPct) || above(-lo, -e.minPct) {
		return line, fmt.Errorf("%s: error %+.1f to %+.1f %%, MAPE %.1f %%; stated %v", e.what, lo, hi, mape, e)
	}
	if len(errs) != e.n {
		return line, fmt.Errorf("%d kernels compared, the measurement says %d", len(errs), e.n)
	}
	return line, nil
}
