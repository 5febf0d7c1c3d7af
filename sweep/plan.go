package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/bug"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"

	"github.com/stcsim/stcsim/sim"
)

// Point is one effective config of the sweep: its identity (place in
// the grid, grid values, config hash), and how to load it again.
type Point struct {
	point.Point

	// spec and sets rebuild the effective config on demand: a plan keeps
	// no config per point, so that its size does not grow with the
	// configs' (a point is a few hundred bytes).
	spec *Spec
	sets []string
	// workloads are what the point runs: the plan's, or with workload.*
	// grid axes, the models built with the point's options (shared by
	// the points that have the same ones).
	workloads []*Workload
}

// Workloads are the workloads the point runs.
func (p *Point) Workloads() []*Workload { return p.workloads }

// Modes are the modes the point runs in (the sweep's).
func (p *Point) Modes() []tensorcore.Mode { return p.spec.modes }

// Load is the point's validated effective config, loaded again.
func (p *Point) Load() (*configs.Loaded, error) {
	ld, err := configs.Load(p.spec.ConfigSpecs(), p.sets)
	if err != nil {
		where := ""
		if ax, ok := p.spec.axisOf(err); ok { // a typo in a grid key, a bad value
			where = fmt.Sprintf(" line %d: grid key %s:", ax.line, ax.Key)
		}
		return nil, fmt.Errorf("sweep %s:%s point %d (%s): %w", p.spec.file,
			where, p.Index+1, p.Label(), err)
	}
	return ld, nil
}

// axisOf is the grid axis (or zip key) whose --set a config error names.
func (s *Spec) axisOf(err error) (Axis, bool) {
	msg := err.Error()
	axes := slices.Clone(s.Grid)
	for _, g := range s.Zip {
		axes = append(axes, g...)
	}
	for _, ax := range axes {
		if strings.Contains(msg, "--set "+ax.Key+"=") || strings.Contains(msg, `--set "`+ax.Key+"=") {
			return ax, true
		}
	}
	return Axis{}, false
}

// ConfigYAML is the effective config as stored, and its hash.
func configYAML(ld *configs.Loaded) ([]byte, string, error) {
	body, err := yaml.Marshal(ld.Config)
	if err != nil {
		return nil, "", fmt.Errorf("encode config: %w", err)
	}
	return body, bodyHash(body), nil
}

func bodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:8])
}

// configHash is configYAML's hash, the config encoded by enc (nil:
// yaml.Marshal).
func configHash(ld *configs.Loaded, enc *sectionEncoder) (string, error) {
	if enc == nil {
		_, h, err := configYAML(ld)
		return h, err
	}
	body, err := enc.marshal(ld.Config)
	if err != nil {
		return "", fmt.Errorf("encode config: %w", err)
	}
	return bodyHash(body), nil
}

// Workload is a resolved workload with the hash of its GEMM list.
type Workload struct {
	Trace *workloads.Trace
	Hash  string
}

// Unit is one piece of work: one point running one workload in all modes.
type Unit struct {
	Point    *Point
	Workload *Workload
}

// ID is the unit as the store keeps it.
func (u Unit) ID() point.Unit {
	return point.Unit{Point: u.Point.Point,
		Workload: point.Workload{Name: u.Workload.Trace.Name, Hash: u.Workload.Hash}}
}

// IDs are the units as the store keeps them, in their order.
func IDs(units []Unit) []point.Unit {
	out := make([]point.Unit, len(units))
	for i, u := range units {
		out[i] = u.ID()
	}
	return out
}

// Plan is a checked sweep: every point validated, every workload loaded.
type Plan struct {
	Spec      *Spec
	Points    []*Point
	Workloads []*Workload
	Modes     []tensorcore.Mode
}

// Units lists the work in a fixed order: points in grid order, each with
// the workloads in spec order.
func (p *Plan) Units() []Unit {
	out := make([]Unit, 0, len(p.Points)*len(p.Workloads))
	for _, pt := range p.Points {
		for _, w := range pt.workloads {
			out = append(out, Unit{Point: pt, Workload: w})
		}
	}
	return out
}

// Shard is a deterministic share of the units: the i-th of n (1-based).
type Shard struct{ I, N int }

// FieldShard is ParseShard's argument as errors name it (package field).
const FieldShard field.Name = "shard"

// ParseShard reads "i/n" with 1 <= i <= n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, &field.Error{Field: FieldShard, Value: quote.Q(s),
			Err: errors.New("want i/n with 1 <= i <= n, like 1/4")}
	}
	return Shard{I: i, N: n}, nil
}

// Select returns the shard's units: every n-th unit starting at i-1, so
// that the shards partition the work and balance it.
func (s Shard) Select(units []Unit) []Unit {
	if s.N <= 1 {
		return units
	}
	var out []Unit
	for k := s.I - 1; k < len(units); k += s.N {
		out = append(out, units[k])
	}
	return out
}

// Resolver loads the workloads a sweep names as models or trace files
// (GEMM lists need no resolver). A nil function rejects that kind.
type Resolver struct {
	Model func(name string, o workloads.Options) (*workloads.Trace, error)
	Trace func(path string) (*workloads.Trace, error)
}

// MaxPoints bounds a sweep's grid: each point's config is loaded and
// checked before anything runs (about a millisecond of CPU each).
const MaxPoints = 100000

// PointCheck, when given to PlanChecked, is called with each point's
// effective config, the sweep's workloads and each workload's job at the
// point through the simulator's front door (sim.Prepare, in the order of
// ws), to refuse a point up front.
type PointCheck func(pt *Point, ld *configs.Loaded, ws []*Workload, jobs []*sim.Prepared) error

// Plan expands the grid and validates every point's effective config and
// every workload before anything runs, so a bad key or value fails the
// sweep up front, naming the key.
func (s *Spec) Plan(r Resolver) (*Plan, error) { return s.PlanChecked(r, nil) }

// PlanChecked is Plan with a check of every point. check may be called
// from several goroutines at once, and for points after one that fails.
//
// The points are loaded and checked in chunks of planChunk, each chunk's
// in parallel (a sweep's planning is most of a large dry run: issue 35
// item 3); what the plan holds and the error it returns, the first in
// grid order, are those of checking the points one after another.
func (s *Spec) PlanChecked(r Resolver, check PointCheck) (*Plan, error) {
	p := &Plan{Spec: s, Modes: s.modes}
	if n, ok := s.pointCount(); !ok {
		return nil, fmt.Errorf("sweep %s: the grid has %s points, above the "+
			"limit of %d; split it into several sweeps", s.file, n, MaxPoints)
	}
	byOptions := map[string][]*Workload{} // the workloads per workload.* values
	hashes := map[string]int{}
	enc := newSectionEncoder()
	combos := s.combinations()
	for lo := 0; lo < len(combos); lo += planChunk {
		res := make([]plannedPoint, min(planChunk, len(combos)-lo))
		parallel(len(res), func(j int) {
			r := &res[j]
			r.pt, r.ld, r.err = s.point(lo+j, combos[lo+j], enc)
		})
		if lo == 0 && res[0].err == nil {
			// The spliced encoding is held to yaml.Marshal by a test;
			// should a config ever encode otherwise, the whole plan
			// marshals each config instead.
			if _, h, err := configYAML(res[0].ld); err == nil && h != res[0].pt.Hash {
				enc = nil
				for j := range res {
					if res[j].err == nil {
						_, res[j].pt.Hash, res[j].err = configYAML(res[j].ld)
					}
				}
			}
		}
		// The workloads, in order (a model is built once per workload.*
		// options); past a point that failed nothing matters.
		for j := range res {
			if res[j].err != nil {
				break
			}
			pt := res[j].pt
			opts := workloadAssignments(combos[lo+j])
			key := fmt.Sprint(opts)
			if pt.workloads = byOptions[key]; pt.workloads == nil {
				if pt.workloads, res[j].err = s.workloadsWith(opts, r); res[j].err != nil {
					break
				}
				byOptions[key] = pt.workloads
			}
			if p.Workloads == nil {
				p.Workloads = pt.workloads
			}
		}
		parallel(len(res), func(j int) {
			r := &res[j]
			if r.err != nil || r.pt.workloads == nil {
				return
			}
			var jobs []*sim.Prepared
			jobs, r.err = p.checkPoint(r.pt, r.ld)
			if r.err == nil && check != nil {
				r.err = check(r.pt, r.ld, r.pt.workloads, jobs)
			}
		})
		for j := range res {
			pt, i := res[j].pt, lo+j
			if res[j].err != nil {
				return nil, res[j].err
			}
			// Points that differ only in a workload option share a config
			// (their workloads' names differ: workloadsWith).
			id := pt.Hash + fmt.Sprint(workloadAssignments(combos[i]))
			if k, dup := hashes[id]; dup {
				return nil, fmt.Errorf("sweep %s: points %d (%s) and %d (%s) "+
					"have the same effective config", s.file, k+1,
					p.Points[k].Label(), i+1, pt.Label())
			}
			hashes[id] = i
			p.Points = append(p.Points, pt)
		}
	}
	return p, nil
}

// planChunk is how many points are loaded at once: their configs are
// dropped once checked, so that a plan's memory does not grow with them.
const planChunk = 32

// plannedPoint is one point being planned.
type plannedPoint struct {
	pt  *Point
	ld  *configs.Loaded
	err error
}

// parallel calls f(0..n-1) on as many goroutines as the process may run.
func parallel(n int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var caught bug.Catcher // a panic, re-raised here after the wait
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1)) - 1; j < n; j = int(next.Add(1)) - 1 {
				caught.Do(func() { f(j) })
			}
		}()
	}
	wg.Wait()
	caught.Raise()
}

// checkPoint brings the point with every workload through the
// simulator's front door (sim.Prepare), so a row the simulator would
// reject fails the sweep before any point runs; the prepared jobs are
// in the order of the point's workloads.
func (p *Plan) checkPoint(pt *Point, ld *configs.Loaded) ([]*sim.Prepared, error) {
	var jobs []*sim.Prepared
	for _, w := range pt.workloads {
		job, err := sim.Prepare(ld.Config, sim.Job{
			Workloads: []*workloads.Trace{w.Trace}, Modes: p.Modes})
		if err != nil {
			return nil, fmt.Errorf("sweep %s: point %d (%s): %w", p.Spec.file,
				pt.Index+1, pt.Label(), err)
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// pointCount is the number of grid points (as text), and whether it is
// within MaxPoints; it is computed before anything is expanded.
func (s *Spec) pointCount() (string, bool) {
	n := 1
	for _, ax := range s.Grid {
		n *= len(ax.Values)
		if n > MaxPoints {
			return "more than " + strconv.Itoa(MaxPoints), false
		}
	}
	for _, g := range s.Zip {
		n *= len(g[0].Values)
		if n > MaxPoints {
			return "more than " + strconv.Itoa(MaxPoints), false
		}
	}
	return strconv.Itoa(n), true
}

// combinations expands the grid axes and zip groups into the points'
// assignments; the first axis varies slowest.
func (s *Spec) combinations() [][]point.Assignment {
	// Each dimension is a list of options; an option sets one or more keys.
	var dims [][][]point.Assignment
	for _, ax := range s.Grid {
		var opts [][]point.Assignment
		for _, v := range ax.Values {
			opts = append(opts, []point.Assignment{{Key: ax.Key, Value: v}})
		}
		dims = append(dims, opts)
	}
	for _, group := range s.Zip {
		opts := make([][]point.Assignment, len(group[0].Values))
		for j := range opts {
			for _, ax := range group {
				opts[j] = append(opts[j], point.Assignment{Key: ax.Key, Value: ax.Values[j]})
			}
		}
		dims = append(dims, opts)
	}
	out := [][]point.Assignment{nil}
	for _, opts := range dims {
		var next [][]point.Assignment
		for _, prefix := range out {
			for _, o := range opts {
				c := append(append([]point.Assignment{}, prefix...), o...)
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

func (s *Spec) point(i int, grid []point.Assignment, enc *sectionEncoder) (*Point, *configs.Loaded, error) {
	sets := append([]string{}, s.Set...)
	for _, a := range grid {
		if !strings.HasPrefix(a.Key, point.WorkloadAxis) {
			sets = append(sets, a.Key+"="+a.Value)
		}
	}
	pt := &Point{Point: point.Point{Index: i, Grid: grid}, spec: s, sets: sets}
	ld, err := pt.Load()
	if err != nil {
		return nil, nil, err
	}
	hash, err := configHash(ld, enc)
	if err != nil {
		return nil, nil, fmt.Errorf("sweep %s: point %d: %w", s.file, i+1, err)
	}
	pt.Hash = hash
	for j, a := range grid {
		if v, ok := ld.Value(a.Key); ok {
			pt.Grid[j].Value = v
		}
	}
	return pt, ld, nil
}

// workloadAssignments are a point's workload.* grid values, in axis order.
func workloadAssignments(grid []point.Assignment) []point.Assignment {
	var out []point.Assignment
	for _, a := range grid {
		if strings.HasPrefix(a.Key, point.WorkloadAxis) {
			out = append(out, a)
		}
	}
	return out
}

// workloadsWith resolves the sweep's workloads with the workload.* grid
// values of a point applied to every model workload that reads them.
func (s *Spec) workloadsWith(opts []point.Assignment, r Resolver) ([]*Workload, error) {
	var out []*Workload
	names := map[string]bool{}
	for i, ws := range s.Workloads {
		var read []string
		for _, a := range opts {
			name := strings.TrimPrefix(a.Key, point.WorkloadAxis)
			if !ws.reads(name) {
				continue
			}
			read = append(read, name+"="+a.Value)
			v, _ := strconv.Atoi(a.Value) // checked with the spec
			switch name {
			case "batch":
				ws.Batch = v
			case "seq":
				ws.Seq = v
			case "resolution":
				ws.Resolution = v
			case "context":
				ws.Context = v
			}
		}
		tr, err := s.workload(ws, r)
		if err == nil {
			err = tr.Validate()
		}
		if err != nil {
			at := ""
			if len(opts) > 0 {
				at = fmt.Sprintf(" (at %v)", opts)
			}
			return nil, fmt.Errorf("sweep %s: line %d: workloads[%d]%s: %w",
				s.file, ws.line, i, at, err)
		}
		if len(read) > 0 {
			// The store keys a point's results by config and workload
			// name: the name carries the options the point varies.
			tr.Name += "@" + strings.Join(read, ",")
		}
		if names[tr.Name] {
			return nil, fmt.Errorf("sweep %s: line %d: workloads[%d]: "+
				"workload name %s used twice", s.file, ws.line, i, quote.Q(tr.Name))
		}
		names[tr.Name] = true
		out = append(out, &Workload{Trace: tr, Hash: traceHash(tr)})
	}
	return out, nil
}

func (s *Spec) workload(ws WorkloadSpec, r Resolver) (*workloads.Trace, error) {
	tr, err := s.resolveWorkload(ws, r)
	if err != nil || ws.Layers == "" {
		return tr, err
	}
	re := regexp.MustCompile(ws.Layers) // compiled when the spec was checked
	kept := &workloads.Trace{Name: tr.Name}
	for _, g := range tr.GEMMs {
		if re.MatchString(g.Name) {
			kept.GEMMs = append(kept.GEMMs, g)
		}
	}
	if len(kept.GEMMs) == 0 {
		return nil, fmt.Errorf("layers %s matches none of the %d rows of %s",
			quote.Q(ws.Layers), len(tr.GEMMs), tr.Name)
	}
	return kept, nil
}

func (s *Spec) resolveWorkload(ws WorkloadSpec, r Resolver) (*workloads.Trace, error) {
	switch {
	case ws.Model != "":
		if r.Model == nil {
			return nil, fmt.Errorf("model %s: built-in models are not "+
				"available in this build", quote.Q(ws.Model))
		}
		return r.Model(ws.Model, workloads.Options{Batch: ws.Batch, Seq: ws.Seq,
			Resolution: ws.Resolution, Phase: ws.Phase, Context: ws.Context})
	case ws.Trace != "":
		if r.Trace == nil {
			return nil, fmt.Errorf("trace %s: trace files are not "+
				"available in this build", quote.Q(ws.Trace))
		}
		return r.Trace(s.resolve(ws.Trace))
	}
	return gemmList(ws)
}

// gemmList builds a workload from "MxNxK" shapes.
func gemmList(ws WorkloadSpec) (*workloads.Trace, error) {
	tr := &workloads.Trace{Name: ws.Name}
	if tr.Name == "" {
		tr.Name = "gemms"
	}
	prec, sp := tensorcore.FP16, ws.Sparsity
	if ws.Precision != "" {
		var err error
		if prec, err = tensorcore.ParsePrecision(ws.Precision); err != nil {
			return nil, fmt.Errorf("precision: %w", err)
		}
	}
	if sp == "" {
		sp = workloads.SparsityFor(prec)
	}
	seen := map[string]bool{}
	for _, shape := range ws.GEMMs {
		m, n, k, err := workloads.ParseGEMM(shape)
		if err != nil {
			return nil, err
		}
		if seen[shape] {
			return nil, fmt.Errorf("gemm %s listed twice", shape)
		}
		seen[shape] = true
		g := workloads.GEMM{Name: shape, M: m, N: n, K: k, Precision: prec,
			Sparsity: sp, Count: 1, Batch: 1}
		if err := g.Validate(); err != nil {
			return nil, fmt.Errorf("gemm %s: %w", shape, err)
		}
		tr.GEMMs = append(tr.GEMMs, g)
	}
	return tr, nil
}

// traceHash identifies a workload's content, so a store never mixes
// results of two different workloads under one name.
func traceHash(tr *workloads.Trace) string {
	b, _ := json.Marshal(tr)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
