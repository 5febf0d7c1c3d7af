package tensorcore

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Stage is one stage of the tensor-core pipeline as derived for one
// instruction: the cycles its first data takes through (Fill) and the
// cycles the stage is held by the instruction (Occupancy), set by the
// slowest rate of the stage (Bound names that config key).
type Stage struct {
	Name      string
	Fill      int
	Occupancy int
	Bound     string
}

// Constraint is one rate of the structural description applied to one
// instruction: Demand units (products, bytes, bits, elements) at Rate per
// cycle hold Stage for Cycles = ceil(Demand / Rate).
type Constraint struct {
	Key    string // the config key of the rate, e.g. "multipliers"
	Stage  string
	Demand int
	Unit   string
	Rate   int
	Cycles int
}

// Datapath is one precision's datapath in one mode and pattern, derived
// from its Precision description: the pipeline the instruction moves
// through, the interval at which back-to-back instructions issue (the
// slowest stage occupancy) and the latency from issue to write-back (the
// stage fills plus the slowest occupancy: the last data leaves the
// bottleneck stage, then crosses the stages after it).
type Datapath struct {
	Precision   Precision
	Mode        Mode
	Pattern     Pattern // N:M of the compressed operand(s); 1:1 when dense
	Shape       Shape   // the logical instruction shape
	Products    int     // multiplies one instruction performs
	Stages      []Stage
	Constraints []Constraint
	Interval    int
	Latency     int
	Binding     []string // keys of the constraints that set Interval
}

// Stage names, in pipeline order. Every datapath has all five; the dense
// one has no fill and no occupancy in the metadata and selector stages.
const (
	StageOperands = "operand read"
	StageDecode   = "metadata decode"
	StageSelect   = "selector mux"
	StageDot      = "dot product"
	StageAccum    = "accumulate"
)

// stageOrder is every datapath's stages, in pipeline order; a dense
// datapath's decode and select stages have no fill.
var stageOrder = [...]string{StageOperands, StageDecode, StageSelect, StageDot, StageAccum}

// NumStages is how many stages every datapath has.
const NumStages = len(stageOrder)

// MuxLevels is the depth of a fan-in-input selector built from 2:1 muxes:
// ceil(log2 fan-in).
func MuxLevels(fanIn int) int { return bits.Len(uint(fanIn - 1)) }

// Derive builds the datapath of precision name (its description p) in
// mode m for pattern pat (ignored when dense). products overrides the
// multiplies per instruction of the dual-side mode (the pairs both masks
// keep); 0 takes the expectation for independent masks, m*n*K*(N/M)^2 of
// the DualShape.
func Derive(p *PrecisionConfig, name Precision, m Mode, pat Pattern, products int) (Datapath, error) {
	k := deriveKey{*p, name, m, pat, products}
	if v, ok := deriveMemo.Load(k); ok {
		d := v.(Datapath)
		d.Stages, d.Constraints = slices.Clone(d.Stages), slices.Clone(d.Constraints)
		return d, nil
	}
	d, err := derive(p, name, m, pat, products)
	if err == nil && deriveMemoSize.Add(1) <= deriveMemoMax {
		c := d
		c.Stages, c.Constraints = slices.Clone(d.Stages), slices.Clone(d.Constraints)
		deriveMemo.Store(k, c)
	}
	return d, err
}

// Every kernel plan derives its datapath (kernel selection plans each
// candidate of each GEMM, a sweep's dry run each point's), from a few
// distinct descriptions: Derive keeps what it derived, by its
// arguments, and hands out copies.
type deriveKey struct {
	p        PrecisionConfig
	name     Precision
	m        Mode
	pat      Pattern
	products int
}

var (
	deriveMemo     sync.Map
	deriveMemoSize atomic.Int64
)

const deriveMemoMax = 1 << 14

func derive(p *PrecisionConfig, name Precision, m Mode, pat Pattern, products int) (Datapath, error) {
	dense, err := ParseShape(p.DenseShape)
	if err != nil {
		return Datapath{}, fmt.Errorf("%s: %w", name, err)
	}
	d := Datapath{Precision: name, Mode: m, Pattern: DensePattern, Shape: dense}
	e := name.ElementBytes()
	var aBytes, bBytes, metaBits int
	switch m {
	case Dense:
		d.Products = dense.FMAs()
		aBytes, bBytes = dense.M*dense.K*e, dense.K*dense.N*e
	case Sparse, DualSide:
		if err := pat.Check(); err != nil {
			return Datapath{}, fmt.Errorf("%s: %w", name, err)
		}
		shape := pat.SparseShape
		if m == DualSide {
			shape = pat.DualShape
		}
		sh, err := shape(dense)
		if err != nil {
			return Datapath{}, fmt.Errorf("%s: %w", name, err)
		}
		d.Pattern, d.Shape = pat, sh
		kept := pat.Kept(sh.K)
		aBytes = sh.M * kept * e
		metaBits = sh.M * kept * pat.MetadataBits()
		bBytes = sh.K * sh.N * e // the whole chunk, for the selectors
		d.Products = sh.M * sh.N * kept
		if m == DualSide {
			// B compressed too; the products are the pairs both masks keep.
			bBytes = kept * sh.N * e
			metaBits += sh.N * kept * pat.MetadataBits()
			d.Products = sh.M * sh.N * pat.Kept(kept)
			if products > 0 {
				d.Products = products
			}
		}
	default:
		return Datapath{}, fmt.Errorf("%s: unknown mode %d", name, m)
	}
	d.build(p, aBytes, bBytes, metaBits)
	return d, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (d *Datapath) build(p *PrecisionConfig, aBytes, bBytes, metaBits int) {
	c := func(key, stage string, demand int, unit string, rate int) Constraint {
		return Constraint{Key: key, Stage: stage, Demand: demand, Unit: unit,
			Rate: rate, Cycles: ceilDiv(demand, rate)}
	}
	d.Constraints = []Constraint{
		c("a_operand_bytes_per_clk", StageOperands, aBytes, "bytes", p.AOperandBytesPerClk),
		c("b_operand_bytes_per_clk", StageOperands, bBytes, "bytes", p.BOperandBytesPerClk),
	}
	sparse := d.Mode != Dense
	if sparse {
		d.Constraints = append(d.Constraints,
			c("metadata_bits_per_clk", StageDecode, metaBits, "bits", p.MetadataBitsPerClk))
		// One selector per multiplier: with one pass it streams at the
		// multipliers' rate; a pattern wider than the fan-in needs more.
		if passes := d.Pattern.SelectorPasses(p.SelectorFanIn); passes > 1 {
			d.Constraints = append(d.Constraints, c("selector_fan_in", StageSelect,
				d.Products*passes, "selections", p.Multipliers))
		}
	}
	d.Constraints = append(d.Constraints,
		c("multipliers", StageDot, d.Products, "products", p.Multipliers),
		c("accumulate_per_clk", StageAccum, d.Shape.M*d.Shape.N, "elements", p.AccumulatePerClk))
	fills := map[string]int{StageOperands: p.OperandLatency, StageDot: p.DotLatency,
		StageAccum: p.AccumulateLatency}
	if sparse {
		fills[StageDecode] = p.DecodeLatency
		fills[StageSelect] = MuxLevels(p.SelectorFanIn) * p.MuxLevelLatency
	}
	d.Stages = nil
	d.Interval, d.Latency = 0, 0
	for _, name := range stageOrder {
		s := Stage{Name: name, Fill: fills[name]}
		for _, k := range d.Constraints {
			if k.Stage == name && k.Cycles > s.Occupancy {
				s.Occupancy, s.Bound = k.Cycles, k.Key
			}
		}
		d.Stages = append(d.Stages, s)
		d.Interval = max(d.Interval, s.Occupancy)
		d.Latency += s.Fill
	}
	d.Latency += d.Interval
	d.Binding = nil
	for _, k := range d.Constraints {
		if k.Cycles == d.Interval {
			d.Binding = append(d.Binding, k.Key)
		}
	}
}

// Describe is the derivation in words: each constraint's demand, rate and
// cycles, then the interval and latency with what sets them.
func (d Datapath) Describe() string {
	var b strings.Builder
	pat := ""
	if d.Mode != Dense {
		pat = " " + d.Pattern.String()
	}
	fmt.Fprintf(&b, "%s %s%s (%s): interval %d cycles, latency %d cycles, %d products/instruction\n",
		d.Precision, d.Mode, pat, d.Shape, d.Interval, d.Latency, d.Products)
	for _, k := range d.Constraints {
		mark := ""
		if k.Cycles == d.Interval {
			mark = "  <- sets the interval"
		}
		fmt.Fprintf(&b, "  %-24s %6d %-10s / %4d per clk = %3d cycles (%s)%s\n",
			k.Key, k.Demand, k.Unit, k.Rate, k.Cycles, k.Stage, mark)
	}
	fills := make([]string, 0, len(d.Stages))
	for _, s := range d.Stages {
		if s.Fill > 0 || s.Occupancy > 0 {
			fills = append(fills, fmt.Sprintf("%s %d", s.Name, s.Fill))
		}
	}
	fmt.Fprintf(&b, "  latency = fills (%s) + slowest occupancy %d\n",
		strings.Join(fills, " + "), d.Interval)
	return b.String()
}
