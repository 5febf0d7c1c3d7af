package validation

import (
	"fmt"
	"slices"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/results"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// gemms runs every GEMM row in each mode under its conditions and at the
// locked boost clock (Options.Conditions), one simulator run per
// effective config and mode (the model's own kernel selection), then each
// pinned kernel on its own. The steps: plan the runs, count the work,
// run them, run the pinned kernels, measure the fixed costs, and add
// each row's time and speedup rows.
func (v *validator) gemms(points []Point) error {
	g, err := v.planGEMMs(points)
	if err != nil {
		return err
	}
	v.countGEMMWork(points, g)
	if err := v.runGEMMs(points, g); err != nil {
		return err
	}
	var pins [2][][2]*sim.LayerResult
	for variant := range pins {
		if pins[variant], err = v.pinAll(points, g, variant); err != nil {
			return err
		}
	}
	fixed, err := v.fixedCosts(points, g, pins[g.primary])
	if err != nil {
		return err
	}
	for i, p := range points {
		v.gemmRows(p, i, g, pins, fixed)
	}
	return nil
}

// gemmSlot is where one row's mode runs in one variant: the run's key
// ("" when it does not run) and its conditions in words.
type gemmSlot struct {
	key  string
	text string
}

// gemmPlan is the GEMM rows' simulator runs, keyed by effective config
// and mode, and where each row's modes run: slots[i][mode][0] under the
// row's conditions, [1] at the locked boost clock.
type gemmPlan struct {
	runs    map[string]*gemmRun
	order   []string
	slots   []map[tensorcore.Mode][2]gemmSlot
	primary int // the variant the time rows report: 0, or 1 when only boost runs
}

// get is row i's result in mode m under variant; nil when it did not run.
func (g *gemmPlan) get(i int, m tensorcore.Mode, variant int) *gemmResult {
	sl := g.slots[i][m][variant]
	if sl.key == "" {
		return nil
	}
	return &gemmResult{res: g.runs[sl.key].out[i], conditions: sl.text, key: sl.key,
		ld: g.runs[sl.key].ld}
}

// planGEMMs gives each row's modes their runs under its conditions and at
// the boost clock; a row whose conditions are the boost clock shares one.
func (v *validator) planGEMMs(points []Point) (*gemmPlan, error) {
	measured := v.opt.Conditions != "boost"
	boost := v.opt.Conditions == "" || v.opt.Conditions == "both" || v.opt.Conditions == "boost"
	g := &gemmPlan{runs: map[string]*gemmRun{}, slots: make([]map[tensorcore.Mode][2]gemmSlot, len(points))}
	if !measured {
		g.primary = 1
	}
	for i, p := range points {
		g.slots[i] = map[tensorcore.Mode][2]gemmSlot{}
		_, base, err := v.config(p, nil)
		if err != nil || base == nil {
			return nil, fmt.Errorf("row %s (line %d): %v", p.ID, p.Line, err)
		}
		for _, m := range tensorcore.Modes {
			if m == tensorcore.Sparse && p.Sparse == 0 && p.Speedup == 0 {
				continue
			}
			var sl [2]gemmSlot
			for variant, on := range []bool{measured, boost} {
				if !on {
					continue
				}
				if sl[variant], err = v.slot(g, p, i, m, variant, base); err != nil {
					return nil, err
				}
			}
			if sl[0].key == sl[1].key {
				sl[1] = gemmSlot{} // the conditions are the boost clock
			}
			g.slots[i][m] = sl
		}
	}
	return g, nil
}

// slot finds or makes the run of row i's mode m under variant (0: its
// conditions, 1: the locked boost clock).
func (v *validator) slot(g *gemmPlan, p Point, i int, m tensorcore.Mode, variant int,
	base *configs.Loaded) (gemmSlot, error) {
	var sets []string
	var err error
	text := fmt.Sprintf("locked %d MHz (boost clock)", base.Config.GPU.ClockMHz)
	if variant == 0 {
		if sets, text, err = conditions(p, m, base); err != nil {
			return gemmSlot{}, err
		}
	} else {
		sets = []string{"gpu.clock_policy=locked"}
	}
	h, err := harnessOf(p, m)
	if err != nil {
		return gemmSlot{}, fmt.Errorf("row %s (line %d): harness %s: %w", p.ID, p.Line, p.HarnessOf(m), err)
	}
	sets = append(sets, h.sets...)
	_, ld, err := v.config(p, sets)
	if err != nil {
		return gemmSlot{}, fmt.Errorf("row %s (line %d): %w", p.ID, p.Line, err)
	}
	// Runs are keyed by the effective config, so that a row's
	// conditions that are the boost clock share its run.
	rk := ld.Hash() + "|" + m.String()
	if g.runs[rk] == nil {
		g.runs[rk] = &gemmRun{ld: ld, mode: m, out: map[int]sim.LayerResult{}}
		g.order = append(g.order, rk)
	}
	if !slices.Contains(g.runs[rk].points, i) {
		g.runs[rk].points = append(g.runs[rk].points, i)
	}
	return gemmSlot{key: rk, text: text}, nil
}

// countGEMMWork adds every simulation below to the progress total: the
// runs' rows, one at twice the K per row and mode with fixed costs, one
// per pinned kernel.
func (v *validator) countGEMMWork(points []Point, g *gemmPlan) {
	for _, rk := range g.order {
		v.total += len(g.runs[rk].points)
	}
	for i, p := range points {
		for _, m := range tensorcore.Modes {
			if v.opt.FixedCosts && g.slots[i][m][g.primary].key != "" {
				v.total++
			}
			if _, ok := p.Kernels[m]; ok {
				for variant := range 2 {
					if g.slots[i][m][variant].key != "" {
						v.total++
					}
				}
			}
		}
	}
}

// runGEMMs simulates each run: its rows as one trace.
func (v *validator) runGEMMs(points []Point, g *gemmPlan) error {
	for _, rk := range g.order {
		r := g.runs[rk]
		t := &workloads.Trace{Name: "validation"}
		for _, i := range r.points {
			t.GEMMs = append(t.GEMMs, gemmOf(points[i]))
		}
		rep, err := v.simulate(r.ld, t, r.mode)
		if err != nil {
			return fmt.Errorf("GEMM rows on %s (%s): %w", r.ld.Config.Name, r.mode, err)
		}
		for j, i := range r.points {
			r.out[i] = rep.Results[j]
		}
	}
	return nil
}

// pinAll is, per row and mode, the kernel the row names simulated in
// variant (nil when the row names no kernel for that mode or the mode
// does not run in that variant).
func (v *validator) pinAll(points []Point, g *gemmPlan, variant int) ([][2]*sim.LayerResult, error) {
	pins := make([][2]*sim.LayerResult, len(points))
	for i, p := range points {
		for _, m := range tensorcore.Modes {
			if _, ok := p.Kernels[m]; !ok || g.slots[i][m][variant].key == "" {
				continue
			}
			r, err := v.pinned(p, m, variant)
			if err != nil {
				return nil, err
			}
			pins[i][m] = r
		}
	}
	return pins, nil
}

// fixedCosts is, with Options.FixedCosts, each row and mode's time at
// twice the K of the kernel that ran (the pinned one where the row names
// it), in us, keyed by (row, mode).
func (v *validator) fixedCosts(points []Point, g *gemmPlan, pins [][2]*sim.LayerResult) (map[[2]int]float64, error) {
	fixed := map[[2]int]float64{}
	if !v.opt.FixedCosts {
		return fixed, nil
	}
	for i, p := range points {
		for _, m := range tensorcore.Modes {
			r := g.get(i, m, g.primary)
			if r == nil {
				continue
			}
			res := r.res
			if pin := pins[i][m]; pin != nil {
				res = *pin // the kernel that ran
			}
			t2, err := v.atDoubleK(p, m, res)
			if err != nil {
				return nil, err
			}
			fixed[[2]int{i, int(m)}] = t2
		}
	}
	return fixed, nil
}

// gemmRows adds row i's time rows (dense, sparse) and its speedup row.
func (v *validator) gemmRows(p Point, i int, g *gemmPlan, pins [2][][2]*sim.LayerResult, fixed map[[2]int]float64) {
	pd, ps := pins[g.primary][i][tensorcore.Dense], pins[g.primary][i][tensorcore.Sparse]
	d, s := g.get(i, tensorcore.Dense, g.primary), g.get(i, tensorcore.Sparse, g.primary)
	bd, bs := g.get(i, tensorcore.Dense, 1), g.get(i, tensorcore.Sparse, 1)
	bpd, bps := pins[1][i][tensorcore.Dense], pins[1][i][tensorcore.Sparse]
	if g.primary == 1 {
		bd, bs, bpd, bps = nil, nil, nil, nil
	}
	// At boost, a row that names its kernel runs that kernel too.
	if bd != nil && bpd != nil {
		bd = &gemmResult{res: *bpd}
	}
	if bs != nil && bps != nil {
		bs = &gemmResult{res: *bps}
	}
	dt, st := timeUS(p, p.Dense), timeUS(p, p.Sparse)
	v.addTime(p, tensorcore.Dense, dt, d, bd, pd)
	v.setFixed(fixed, i, tensorcore.Dense)
	if p.Sparse > 0 {
		v.addTime(p, tensorcore.Sparse, st, s, bs, ps)
		v.setFixed(fixed, i, tensorcore.Sparse)
	}
	if sp := p.Speedup; (sp > 0 || p.Sparse > 0) && s != nil {
		if sp == 0 {
			sp = dt / st
		}
		v.speedupRow(p, sp, d, s, bd, bs, pd, ps)
	}
}

// speedupRow adds a row's speedup: measured sp against the simulated
// dense / sparse time (the pinned kernels' where the row names them),
// with the model's own selection and the boost clock beside it.
func (v *validator) speedupRow(p Point, sp float64, d, s, bd, bs *gemmResult, pd, ps *sim.LayerResult) {
	dsim, ssim := d.res.TimeUS, s.res.TimeUS
	if pd != nil {
		dsim = pd.TimeUS
	}
	if ps != nil {
		ssim = ps.TimeUS
	}
	row := v.add(p, "gemm_speedup", "x", sp, dsim/ssim, d.ld, "")
	if pd != nil || ps != nil {
		row.setSelected("", d.res.TimeUS/s.res.TimeUS)
	}
	row.Clock, row.Conditions, row.Harness = p.Clock, d.conditions, p.Harness
	if d.conditions != s.conditions {
		row.Conditions = "dense " + d.conditions + "; sparse " + s.conditions
	}
	if bd != nil || bs != nil {
		bdt, bst := dsim, ssim
		if bd != nil {
			bdt = bd.res.TimeUS
		}
		if bs != nil {
			bst = bs.res.TimeUS
		}
		row.setBoost(bdt/bst, 0)
	}
	if pd != nil && ps != nil {
		row.setPinned("", dsim/ssim)
	}
}

func gemmOf(p Point) workloads.GEMM { return p.Row() }

func (v *validator) addTime(p Point, m tensorcore.Mode, measured float64, sel, boost *gemmResult, pin *sim.LayerResult) {
	kind := "gemm_" + m.String() + "_time"
	row := v.add(p, kind, "us", measured, sel.res.TimeUS, sel.ld, sel.res.Kernel)
	row.Clock, row.Conditions = p.ClockOf(m), sel.conditions
	if h, err := harnessOf(p, m); err == nil {
		row.Operands, row.L2Start, row.CRead, row.Timing = h.operands, h.l2, h.cRead, h.timing
	}
	row.Spread = sel.res.CyclesSpread
	row.Margin, row.MarginIsBound = sel.res.Margin(), sel.res.MarginIsBound()
	row.SimulatedClockMHz = sel.res.ClockMHz
	row.setPhases(sel.res.Phases)
	if boost != nil {
		row.setBoost(boost.res.TimeUS, boost.res.ClockMHz)
	}
	if pin != nil {
		row.setPinned(pin.Kernel, pin.TimeUS)
		row.setSelected(row.Kernel, row.Simulated)
		row.Kernel, row.Simulated, row.Error = pin.Kernel, pin.TimeUS, *row.PinnedError
		row.SimulatedClockMHz = pin.ClockMHz
		row.setPhases(pin.Phases)
	}
}

func (r *Row) setPhases(p results.Phases) {
	r.Phases = nil
	if p.Mainloop > 0 {
		r.Phases = &p
	}
}

// atDoubleK is the time of mode m's selected kernel (res) on the row's
// GEMM with twice its K, at the clock and data activity it ran at.
func (v *validator) atDoubleK(p Point, m tensorcore.Mode, res sim.LayerResult) (float64, error) {
	h, err := harnessOf(p, m)
	if err != nil {
		return 0, err
	}
	tile, splitK := pinnedPlan(res.Kernel)
	sets := append([]string{fmt.Sprintf("gpu.clock_mhz=%d", res.ClockMHz),
		"gpu.clock_policy=locked", "kernel.force=" + tile,
		fmt.Sprintf("kernel.split_k=[%d]", splitK)}, h.sets...)
	_, ld, err := v.config(p, sets)
	if err != nil {
		return 0, fmt.Errorf("row %s (line %d): fixed costs: %w", p.ID, p.Line, err)
	}
	g := gemmOf(p)
	g.K *= 2
	rep, err := v.simulate(ld, &workloads.Trace{Name: "validation", GEMMs: []workloads.GEMM{g}}, m)
	if err != nil {
		return 0, fmt.Errorf("row %s (line %d): fixed costs at K=%d: %w", p.ID, p.Line, g.K, err)
	}
	if got := rep.Results[0].Kernel; got != res.Kernel {
		return 0, fmt.Errorf("row %s (line %d): fixed costs: kernel %s ran as %s at K=%d",
			p.ID, p.Line, res.Kernel, got, g.K)
	}
	return rep.Results[0].TimeUS, nil
}

// setFixed splits the last row added (mode m of point i) into its fixed
// part and mainloop.
func (v *validator) setFixed(fixed map[[2]int]float64, i int, m tensorcore.Mode) {
	t2, ok := fixed[[2]int{i, int(m)}]
	if !ok {
		return
	}
	r := &v.rep.Rows[len(v.rep.Rows)-1]
	r.FixedUS = 2*r.Simulated - t2
	r.MainloopUS = r.Simulated - r.FixedUS
}

func (r *Row) setBoost(simulated float64, mhz int) {
	e := (simulated - r.Measured) / r.Measured
	r.BoostSimulated, r.BoostError, r.BoostClockMHz = simulated, &e, mhz
}

func (r *Row) setSelected(kernel string, simulated float64) {
	e := (simulated - r.Measured) / r.Measured
	r.SelectedKernel, r.SelectedSimulated, r.SelectedError = kernel, simulated, &e
}

func (r *Row) setPinned(kernel string, simulated float64) {
	e := (simulated - r.Measured) / r.Measured
	r.PinnedKernel, r.PinnedSimulated, r.PinnedError = kernel, simulated, &e
}

// pinned simulates the kernel a row names for mode, with kernel.force
// (and split_k) set, under the row's conditions (variant 0) or at the
// config's locked boost clock (variant 1).
func (v *validator) pinned(p Point, mode tensorcore.Mode, variant int) (*sim.LayerResult, error) {
	name := p.Kernels[mode]
	tile, splitK := pinnedPlan(name)
	_, base, err := v.config(p, nil)
	if err != nil {
		return nil, err
	}
	sets := []string{"gpu.clock_policy=locked"}
	if variant == 0 {
		if sets, _, err = conditions(p, mode, base); err != nil {
			return nil, err
		}
	}
	h, err := harnessOf(p, mode)
	if err != nil {
		return nil, err
	}
	sets = append(sets, h.sets...)
	_, ld, err := v.config(p, append(sets, "kernel.force="+tile,
		fmt.Sprintf("kernel.split_k=[%d]", splitK)))
	if err != nil {
		return nil, fmt.Errorf("row %s (line %d): pinned %s kernel %s: %w",
			p.ID, p.Line, mode, name, err)
	}
	t := &workloads.Trace{Name: "validation", GEMMs: []workloads.GEMM{gemmOf(p)}}
	rep, err := v.simulate(ld, t, mode)
	if err != nil {
		return nil, fmt.Errorf("row %s: pinned %s kernel %s: %w", p.ID,
			mode, name, err)
	}
	r := rep.Results[0]
	if r.Kernel != name {
		return nil, fmt.Errorf("row %s (line %d): pinned %s kernel %s "+
			"cannot run this GEMM as named (the model ran %s)", p.ID, p.Line,
			mode, name, r.Kernel)
	}
	return &r, nil
}

// timeUS converts a GEMM row's value to microseconds.
func timeUS(p Point, v float64) float64 {
	switch p.Unit {
	case "TFLOPS":
		return 2 * float64(p.M) * float64(p.N) * float64(p.K) / (v * 1e12) * 1e6
	case "ms":
		return v * 1e3
	}
	return v
}
