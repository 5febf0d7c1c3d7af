package sim

import "github.com/stcsim/stcsim/configs"

// CachedRecords counts the records of job that its cache (Job.Cache,
// Job.CacheSalt) holds, looked up as Run looks them up, simulating
// nothing: a sweep's dry run leaves them out of its estimate. Without a
// cache, hits is 0.
func CachedRecords(ld *configs.Loaded, job Job) (hits, total int, err error) {
	r := newRunner(ld, job)
	jobs, err := r.layerJobs()
	if err != nil {
		return 0, 0, err
	}
	weights := map[string][]WeightsSource{}
	for _, w := range job.Workloads {
		ws, err := w.WeightsSources()
		if err != nil {
			return 0, 0, err
		}
		weights[w.Name] = ws
	}
	for _, rec := range r.cached(jobs, weightHashes(weights)) {
		if rec != nil {
			hits++
		}
	}
	return hits, len(jobs), nil
}
