package sim

import (
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/kernel"
)

// explainLaunch fills a record's launch shape from its kernel plan.
func explainLaunch(res *LayerResult, p *kernel.Plan, sms int) {
	res.CTAs = p.CTAs
	res.CTAsPerSM = p.Occupancy
	res.OccupancyLimit = p.Limit
	res.Waves = kernel.CeilDiv(p.CTAs, sms*p.Occupancy)
	if p.Shape.Sparse {
		res.IdealSpeedup = float64(p.Pattern.M) / float64(p.Pattern.N)
	}
}

// explainLoss fills a sparse record's loss decomposition against the
// dense record of the same layer.
func explainLoss(s *LayerResult, d LayerResult) {
	if s.IdealSpeedup == 0 {
		return
	}
	ideal := d.TimeUS / s.IdealSpeedup
	gap := s.TimeUS - ideal
	if gap <= 0 {
		return
	}
	ss, ds := s.Breakdown.Shares(), d.Breakdown.Shares()
	lost := make([]float64, len(ss))
	for i := range ss {
		lost[i] = (ss[i]*s.TimeUS - ds[i]*ideal) / gap
	}
	loss := results.BreakdownOf(lost)
	s.LossUS, s.Loss = gap, loss
}
