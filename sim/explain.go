package sim

import "github.com/stcsim/stcsim/results"

// explainLaunch fills a record's launch shape from its kernel plan.
func explainLaunch(res *LayerResult, p *kernelPlan, sms int) {
	res.CTAs = p.ctas
	res.CTAsPerSM = p.occupancy
	res.OccupancyLimit = p.limit
	res.Waves = ceilDiv(p.ctas, sms*p.occupancy)
	if p.shape.Sparse {
		res.IdealSpeedup = float64(p.pattern.M) / float64(p.pattern.N)
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
