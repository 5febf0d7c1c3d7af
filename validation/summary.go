package validation

import (
	"math"
	"sort"
)

func (v *validator) summarize() { v.rep.Summary = Summarize(v.rep.Rows) }

// Summarize is the per-kind summary of rows (what Run reports), for
// reports merged from several runs.
func Summarize(rows []Row) []Summary {
	var out []Summary
	byKind := map[string][]Row{}
	var kinds []string
	for _, r := range rows {
		if byKind[r.Kind] == nil {
			kinds = append(kinds, r.Kind)
		}
		byKind[r.Kind] = append(byKind[r.Kind], r)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		out = append(out, summarizeKind(k, byKind[k]))
	}
	return out
}

func summarizeKind(kind string, rows []Row) Summary {
	s := Summary{Kind: kind, N: len(rows)}
	var meas, simd []float64
	for _, r := range rows {
		s.Check = s.Check || r.Check
		s.MAPE += math.Abs(r.Error)
		s.Bias += r.Error
		if r.PinnedError != nil {
			s.PinnedN++
			s.PinnedMAPE += math.Abs(*r.PinnedError)
			s.PinnedBias += *r.PinnedError
		}
		if !r.HeldOut {
			continue
		}
		s.HeldOutN++
		s.HeldOutMAPE += math.Abs(r.Error)
		s.HeldOutBias += r.Error
		switch {
		case r.Error > 0:
			s.Over++
		case r.Error < 0:
			s.Under++
		}
		meas = append(meas, r.Measured)
		simd = append(simd, r.Simulated)
		if r.BoostError != nil {
			s.BoostN++
			s.BoostMAPE += math.Abs(*r.BoostError)
			s.BoostBias += *r.BoostError
		}
	}
	s.MAPE /= float64(len(rows))
	s.Bias /= float64(len(rows))
	if s.HeldOutN > 0 {
		s.HeldOutMAPE /= float64(s.HeldOutN)
		s.HeldOutBias /= float64(s.HeldOutN)
	}
	if s.BoostN > 0 {
		s.BoostMAPE /= float64(s.BoostN)
		s.BoostBias /= float64(s.BoostN)
	}
	if s.PinnedN > 0 {
		s.PinnedMAPE /= float64(s.PinnedN)
		s.PinnedBias /= float64(s.PinnedN)
	}
	if kind == "gemm_speedup" && len(meas) >= 3 {
		rho := spearman(meas, simd)
		s.RankCorrelation = &rho
	}
	if kind == "gemm_speedup" {
		s.KGap = kGap(rows)
	}
	return s
}

// The K groups of the speedup's K gap (issue 30's: the rows of the
// published points with K = 3072 and more, and with K = 768 and less).
const (
	LongK  = 3072
	ShortK = 768
)

// KGap is the mean speedup of the held-out rows with K >= LongK minus
// that of the rows with K <= ShortK, measured and simulated.
type KGap struct {
	LongN     int     `json:"long_n"`
	ShortN    int     `json:"short_n"`
	Measured  float64 `json:"measured"`
	Simulated float64 `json:"simulated"`
}

// kGap is rows' KGap (nil when a group is empty).
func kGap(rows []Row) *KGap {
	var g KGap
	var long, short [2]float64
	for _, r := range rows {
		switch {
		case !r.HeldOut || r.K == 0:
		case r.K >= LongK:
			g.LongN++
			long[0] += r.Measured
			long[1] += r.Simulated
		case r.K <= ShortK:
			g.ShortN++
			short[0] += r.Measured
			short[1] += r.Simulated
		}
	}
	if g.LongN == 0 || g.ShortN == 0 {
		return nil
	}
	l, sh := float64(g.LongN), float64(g.ShortN)
	g.Measured = long[0]/l - short[0]/sh
	g.Simulated = long[1]/l - short[1]/sh
	return &g
}

// spearman is Spearman's rank correlation: Pearson's r of the ranks
// (ties share their mean rank).
func spearman(x, y []float64) float64 {
	return pearson(ranks(x), ranks(y))
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i] / n
		my += y[i] / n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// MaxMAPE is the largest MAPE over the kinds.
func (r *Report) MaxMAPE() (string, float64) {
	kind, worst := "", 0.0
	for _, s := range r.Summary {
		if s.MAPE > worst {
			kind, worst = s.Kind, s.MAPE
		}
	}
	return kind, worst
}
