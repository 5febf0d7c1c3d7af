package sim

import "reflect"

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
	loss := Breakdown{}
	sv, dv := reflect.ValueOf(s.Breakdown), reflect.ValueOf(d.Breakdown)
	lv := reflect.ValueOf(&loss).Elem()
	for i := 0; i < lv.NumField(); i++ {
		if lv.Field(i).Kind() != reflect.Float64 {
			continue
		}
		lost := sv.Field(i).Float()*s.TimeUS - dv.Field(i).Float()*ideal
		lv.Field(i).SetFloat(lost / gap)
	}
	s.LossUS, s.Loss = gap, loss
}
