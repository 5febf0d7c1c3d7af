package tensorcore

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/internal/check"
)

// Config holds the tensor-core parameters of one GPU, per precision.
type Config struct {
	// Fidelity is "batched" (a warp's run of back-to-back MMAs is one
	// event) or "instruction" (every MMA moves through the stages).
	Fidelity string `yaml:"fidelity"`
	// DualSide makes the sparse mode a hypothetical dual-side datapath:
	// both operands N:M compressed, products only where both masks keep a
	// value (docs/tensorcore.md). MaskSeed seeds the synthetic masks it
	// uses where a trace row has no weight file.
	DualSide bool            `yaml:"dual_side"`
	MaskSeed int             `yaml:"mask_seed" mode:"sparse"`
	FP16     PrecisionConfig `yaml:"fp16"`
	BF16     PrecisionConfig `yaml:"bf16"`
	TF32     PrecisionConfig `yaml:"tf32"`
	INT8     PrecisionConfig `yaml:"int8"`
}

// PrecisionConfig is the structural description of one input precision's
// datapath in one sub-partition's tensor core. The issue interval and the
// latency of every instruction are derived from it (Derive); nothing here
// is an interval or a latency of a whole instruction.
type PrecisionConfig struct {
	// Multipliers is the number of products the dot-product array forms
	// per cycle (one per multiplier).
	Multipliers int `yaml:"multipliers"`
	// AOperandBytesPerClk and BOperandBytesPerClk are the widths of operand
	// delivery into the datapath. In sparse mode A carries only the kept
	// values and B carries the whole M-wide chunk for the selector muxes.
	AOperandBytesPerClk int `yaml:"a_operand_bytes_per_clk"`
	BOperandBytesPerClk int `yaml:"b_operand_bytes_per_clk"`
	// SelectorFanIn is the inputs of each selector mux (one mux per
	// multiplier): the B candidates a kept A value can be matched with in
	// one pass. A pattern with M > fan-in takes ceil(M/fan-in) passes.
	SelectorFanIn int `yaml:"selector_fan_in" dense:"energy"`
	// MetadataBitsPerClk is the read and decode rate of the metadata
	// register.
	MetadataBitsPerClk int `yaml:"metadata_bits_per_clk" mode:"sparse"`
	// AccumulatePerClk is the accumulator elements (of C/D) the
	// accumulation stage reads, adds and writes per cycle.
	AccumulatePerClk int `yaml:"accumulate_per_clk"`
	// Fill latencies: the cycles the first data of an instruction takes
	// through each stage. A stage's occupancy (how long it is held) comes
	// from the rates above; an instruction's latency is the sum of the
	// fills plus its longest occupancy.
	OperandLatency    int `yaml:"operand_latency"`
	DecodeLatency     int `yaml:"metadata_decode_latency" mode:"sparse"`
	MuxLevelLatency   int `yaml:"mux_level_latency" mode:"sparse"` // per 2:1 level: ceil(log2 fan-in) levels
	DotLatency        int `yaml:"dot_latency"`                     // multiply and add tree
	AccumulateLatency int `yaml:"accumulate_latency"`

	// DenseShape is the dense mma instruction; the sparse instruction of a
	// pattern N:M is the same m and n with K scaled by M/N (so it multiplies
	// as many kept values as the dense one).
	DenseShape string `yaml:"dense_shape"`
	// SparsePattern is the pattern sparse rows run with unless a trace
	// row names its own.
	SparsePattern string `yaml:"sparse_pattern" mode:"sparse"`

	parsed parsedPattern // sparse_pattern as validated (Pattern)
}

// parsedPattern is sparse_pattern parsed when the section was validated,
// with the text it was parsed from.
type parsedPattern struct {
	from    string
	pattern Pattern
}

// Pattern is the parsed sparse_pattern: parsed once, when the section is
// validated (configs.Load validates every config it loads). A section
// whose sparse_pattern changed since (a test's edit) is parsed again; an
// invalid one gives the zero Pattern, which Validate reports.
func (p *PrecisionConfig) Pattern() Pattern {
	if p.parsed.from == p.SparsePattern && p.parsed.from != "" {
		return p.parsed.pattern
	}
	pat, _ := ParsePattern(p.SparsePattern)
	return pat
}

// Shape is an MMA instruction shape mMnNkK.
type Shape struct{ M, N, K int }

func (s Shape) String() string {
	return "m" + strconv.Itoa(s.M) + "n" + strconv.Itoa(s.N) + "k" + strconv.Itoa(s.K)
}

// FMAs is the number of multiply-adds of one instruction of this shape.
func (s Shape) FMAs() int { return s.M * s.N * s.K }

// ParseShape reads "m16n8k16".
func ParseShape(s string) (Shape, error) {
	// Cut by hand (not fmt.Sscanf: every kernel plan parses its
	// shapes, and a sweep plans thousands); String gives back s only for
	// the canonical form (no sign, no leading zero).
	var sh Shape
	rest, ok := strings.CutPrefix(s, "m")
	m, rest, okN := strings.Cut(rest, "n")
	n, k, okK := strings.Cut(rest, "k")
	var e1, e2, e3 error
	sh.M, e1 = strconv.Atoi(m)
	sh.N, e2 = strconv.Atoi(n)
	sh.K, e3 = strconv.Atoi(k)
	if !ok || !okN || !okK || e1 != nil || e2 != nil || e3 != nil ||
		sh.M <= 0 || sh.N <= 0 || sh.K <= 0 || sh.String() != s {
		return Shape{}, fmt.Errorf("bad MMA shape %q (want like m16n8k16)", s)
	}
	return sh, nil
}

// Get returns the parameters of a precision.
func (c *Config) Get(p Precision) (*PrecisionConfig, error) {
	switch p {
	case FP16:
		return &c.FP16, nil
	case BF16:
		return &c.BF16, nil
	case TF32:
		return &c.TF32, nil
	case INT8:
		return &c.INT8, nil
	}
	return nil, fmt.Errorf("unknown precision %v (want %s)", p,
		orList(precisionNames))
}

// CheckPattern says whether the sparse datapath of precision p runs an
// operand of pattern pat: it must be a pattern (Pattern.Check) whose
// mma.sp instruction, dense_shape with K x M/N, is whole.
func (c *Config) CheckPattern(p Precision, pat Pattern) error {
	pc, err := c.Get(p)
	if err != nil {
		return err
	}
	if err := pat.Check(); err != nil {
		return fmt.Errorf("sparsity %s: %w", pat, err)
	}
	dense, err := ParseShape(pc.DenseShape)
	if err != nil {
		return fmt.Errorf("tensorcore.%s.dense_shape: %w", p, err)
	}
	if _, err := pat.SparseShape(dense); err != nil {
		return fmt.Errorf("sparsity %s: the %s sparse datapath cannot run it "+
			"(tensorcore.%s.dense_shape %s): %w", pat, p, p, dense, err)
	}
	return nil
}

// Validate checks the section.
func (c *Config) Validate() check.List {
	var l check.List
	l.OneOf("fidelity", c.Fidelity, "batched", "instruction")
	l.NonNegative("mask_seed", c.MaskSeed)
	for _, n := range Precisions {
		p, _ := c.Get(n)
		l = append(l, p.validate().Prefix(n.String())...)
	}
	return l
}

// MinFanIn and MaxFanIn bound selector_fan_in: a mux picks from at least
// two inputs; 64 is far beyond any N:M pattern a tensor core would fetch
// B for (the section's validator is the one check of it).
const MinFanIn, MaxFanIn = 2, 64

// Keys are a precision's config keys (their YAML names), in the order
// of the struct (and of the shipped configs).
func Keys() []string {
	t := reflect.TypeFor[PrecisionConfig]()
	var keys []string
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			keys = append(keys, k)
		}
	}
	return keys
}

// Value is the value of the precision's config key (its YAML name; Keys).
func (p *PrecisionConfig) Value(key string) (any, bool) {
	for i, k := range Keys() {
		if k == key {
			return reflect.ValueOf(p).Elem().Field(i).Interface(), true
		}
	}
	return nil, false // Keys are the struct's leading exported fields
}

func (p *PrecisionConfig) validate() check.List {
	var l check.List
	for _, v := range []struct {
		k string
		v int
	}{{"multipliers", p.Multipliers},
		{"a_operand_bytes_per_clk", p.AOperandBytesPerClk},
		{"b_operand_bytes_per_clk", p.BOperandBytesPerClk},
		{"metadata_bits_per_clk", p.MetadataBitsPerClk},
		{"accumulate_per_clk", p.AccumulatePerClk}} {
		l.Positive(v.k, v.v)
	}
	if p.SelectorFanIn < MinFanIn || p.SelectorFanIn > MaxFanIn {
		l.Add("selector_fan_in", "must be in %d..%d, got %d", MinFanIn, MaxFanIn, p.SelectorFanIn)
	}
	for _, v := range []struct {
		k string
		v int
	}{{"operand_latency", p.OperandLatency},
		{"metadata_decode_latency", p.DecodeLatency},
		{"mux_level_latency", p.MuxLevelLatency},
		{"dot_latency", p.DotLatency},
		{"accumulate_latency", p.AccumulateLatency}} {
		l.NonNegative(v.k, v.v)
	}
	dense, err := ParseShape(p.DenseShape)
	if err != nil {
		l.Add("dense_shape", "%v", err)
	}
	pat, perr := ParsePattern(p.SparsePattern)
	if perr != nil {
		l.Add("sparse_pattern", "%v", perr)
	}
	if err == nil && perr == nil {
		if _, err := pat.SparseShape(dense); err != nil {
			l.Add("sparse_pattern", "%v", err)
		}
	}
	if perr == nil {
		p.parsed = parsedPattern{from: p.SparsePattern, pattern: pat}
	}
	return l
}
