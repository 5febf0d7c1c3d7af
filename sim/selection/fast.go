package selection

import (
	"fmt"
	"sort"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sim/gpu"
	"github.com/stcsim/stcsim/sim/kernel"
)

// selectFast is selectRanked on the fast tier (sim.fidelity=fast): the
// same candidates the pre-model keeps (Rank), each timed whole by fast.Time,
// the fastest reported, split-K reduction included. Where the tier
// refuses any candidate (a schedule or mode it does not model) or the
// clock is power-capped (the cap needs event counts it does not make),
// the GEMM is selected and timed at instruction level instead, and the
// result says why (FastRefused): one tier within a selection, since the
// fast tier's error would bias a comparison across tiers.
func selectFast(cfg *configs.Config, plans []*kernel.Plan, obs gpu.Observer) (*gpu.Result, error) {
	timed, refused := FastTimes(cfg, plans)
	if refused != "" {
		r, err := runInstruction(cfg, plans, obs)
		if err != nil {
			return nil, err
		}
		r.FastRefused = refused
		return r, nil
	}
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].Cycles < timed[j].Cycles })
	best := timed[0]
	best.RunCycles = []uint64{best.Cycles}
	for _, c := range timed {
		best.Candidates = append(best.Candidates, results.Candidate{Kernel: c.Plan.Name(),
			EstimatedCycles: float64(c.Cycles)})
	}
	return best, nil
}

// FastTimes times every plan on the fast tier, or says why the tier
// refuses the GEMM (non-empty refused, nothing timed).
func FastTimes(cfg *configs.Config, plans []*kernel.Plan) (timed []*gpu.Result, refused string) {
	if cfg.GPU.ClockPolicy == energy.PowerCapped {
		return nil, "gpu.clock_policy=power_capped needs event counts the fast tier does not make"
	}
	for _, p := range plans {
		r, err := fast.Time(cfg, p)
		if err != nil {
			return nil, err.Error()
		}
		timed = append(timed, r)
	}
	return timed, ""
}

// FastNote is what a record says of the tier that timed it: nothing at
// instruction level, the fast tier's stated error, or why the fast tier
// handed the GEMM back.
func FastNote(k *gpu.Result) string {
	switch {
	case k.FastRefused != "":
		return fmt.Sprintf("sim.fidelity=fast, timed at instruction level: %s", k.FastRefused)
	case k.Fidelity == configs.FidelityFast:
		return fmt.Sprintf("timed by the fast tier, measured within %.1f %% of the instruction "+
			"tier per kernel (fidelity_error_pct; config show says where): its breakdown, traffic, "+
			"utilization and event energy are zero (energy is static only)", fast.StatedErrorPctFor(k.Plan))
	}
	return ""
}
