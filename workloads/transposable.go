package workloads

import (
	"fmt"

	"github.com/stcsim/stcsim/tensorcore"
)

// PruneTransposable is Prune with a transposable mask: p along K and
// along M (tensorcore.PruneTransposable), the mask that lets the data
// gradient W^T dY run sparse too. The summary's KeptMagnitude is the
// transposable mask's, PlainKeptMagnitude the plain mask's on the same
// weights: what running dX sparse costs in kept magnitude. M must be a
// multiple of p.M too.
func PruneTransposable(t *Tensor, source string, p tensorcore.Pattern, verify bool) (*PruneResult, error) {
	m, err := t.GEMMView()
	if err != nil {
		return nil, fmt.Errorf("prune %s: %w", source, err)
	}
	if m.Rows%p.M != 0 {
		return nil, fmt.Errorf("prune %s: M = %d is not a multiple of %d: a "+
			"transposable %s mask needs whole %d x %d blocks", source, m.Rows, p.M, p, p.M, p.M)
	}
	return prune(t, source, p, verify, transposableRule{})
}

// transposableRule is the maskRule of a transposable mask.
type transposableRule struct{}

func (transposableRule) check(m tensorcore.Matrix, p tensorcore.Pattern) error {
	return tensorcore.CheckTransposable(m, p.N, p.M)
}

func (transposableRule) prune(m tensorcore.Matrix, p tensorcore.Pattern) (tensorcore.Matrix, error) {
	return tensorcore.PruneTransposable(m, p.N, p.M)
}

func (transposableRule) summarize(s *PruneSummary, in, _ tensorcore.Matrix, p tensorcore.Pattern) {
	s.Transposable = true
	s.PlainKeptMagnitude = keptFraction(in, tensorcore.PruneMagnitude(in, p))
}
