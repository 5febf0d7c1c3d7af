package tensorcore

import (
	"fmt"

	"github.com/stcsim/stcsim/configs/check"
)

// Config holds the tensor-core parameters of one GPU, per precision.
type Config struct {
	// Fidelity is "batched" (a warp's run of back-to-back MMAs is one
	// event) or "instruction" (every MMA is simulated).
	Fidelity string          `yaml:"fidelity"`
	FP16     PrecisionConfig `yaml:"fp16"`
	BF16     PrecisionConfig `yaml:"bf16"`
	TF32     PrecisionConfig `yaml:"tf32"`
	INT8     PrecisionConfig `yaml:"int8"`
}

// PrecisionConfig holds the datapath parameters of one input precision.
type PrecisionConfig struct {
	DenseFMAPerClk     int    `yaml:"dense_fma_per_clk"`
	DenseShape         string `yaml:"dense_shape"`
	DenseIssueInterval int    `yaml:"dense_issue_interval"`
	DenseLatency       int    `yaml:"dense_latency"`
	DenseStages        int    `yaml:"dense_stages"`

	SparseShape         string `yaml:"sparse_shape"`
	SparseIssueInterval int    `yaml:"sparse_issue_interval"`
	SparseLatency       int    `yaml:"sparse_latency"`
	SparseStages        int    `yaml:"sparse_stages"`
	SparsePattern       string `yaml:"sparse_pattern"`
	MetadataBits        int    `yaml:"metadata_bits"`
}

// Shape is an MMA instruction shape mMnNkK.
type Shape struct{ M, N, K int }

func (s Shape) String() string { return fmt.Sprintf("m%dn%dk%d", s.M, s.N, s.K) }

// FMAs is the number of multiply-adds of one instruction of this shape.
func (s Shape) FMAs() int { return s.M * s.N * s.K }

// ParseShape reads "m16n8k16".
func ParseShape(s string) (Shape, error) {
	var sh Shape
	n, err := fmt.Sscanf(s, "m%dn%dk%d", &sh.M, &sh.N, &sh.K)
	if err != nil || n != 3 || sh.M <= 0 || sh.N <= 0 || sh.K <= 0 ||
		sh.String() != s {
		return Shape{}, fmt.Errorf("bad MMA shape %q (want like m16n8k16)", s)
	}
	return sh, nil
}

// Pattern is an N:M structured-sparsity pattern: at most N nonzeros in
// every M consecutive values along K.
type Pattern struct{ N, M int }

func (p Pattern) String() string { return fmt.Sprintf("%d:%d", p.N, p.M) }

// ParsePattern reads "2:4".
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	n, err := fmt.Sscanf(s, "%d:%d", &p.N, &p.M)
	if err != nil || n != 2 || p.N <= 0 || p.M <= p.N || p.String() != s {
		return Pattern{}, fmt.Errorf("bad sparsity pattern %q (want N:M with 0 < N < M, like 2:4)", s)
	}
	return p, nil
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
// operand of the given N:M pattern. Each precision's datapath runs the one
// pattern of its sparse_pattern key; the message names that key.
func (c *Config) CheckPattern(p Precision, pattern string) error {
	pc, err := c.Get(p)
	if err != nil {
		return err
	}
	want, err := ParsePattern(pc.SparsePattern)
	if err != nil {
		return fmt.Errorf("tensorcore.%s.sparse_pattern: %w", p, err)
	}
	if got, err := ParsePattern(pattern); err != nil || got != want {
		return fmt.Errorf("sparsity %s: the %s sparse datapath runs %s "+
			"(tensorcore.%s.sparse_pattern); make the row %s or dense, or "+
			"set that key", pattern, p, want, p, want)
	}
	return nil
}

// Validate checks the section.
func (c *Config) Validate() check.List {
	var l check.List
	l.OneOf("fidelity", c.Fidelity, "batched", "instruction")
	for _, n := range Precisions {
		p, _ := c.Get(n)
		l = append(l, p.validate().Prefix(n.String())...)
	}
	return l
}

func (p *PrecisionConfig) validate() check.List {
	var l check.List
	l.PowerOfTwo("dense_fma_per_clk", p.DenseFMAPerClk)
	dense, err := ParseShape(p.DenseShape)
	if err != nil {
		l.Add("dense_shape", "%v", err)
	}
	sparse, err := ParseShape(p.SparseShape)
	if err != nil {
		l.Add("sparse_shape", "%v", err)
	}
	pat, err := ParsePattern(p.SparsePattern)
	if err != nil {
		l.Add("sparse_pattern", "%v", err)
	}
	for _, v := range []struct {
		k string
		v int
	}{{"dense_issue_interval", p.DenseIssueInterval},
		{"dense_latency", p.DenseLatency}, {"dense_stages", p.DenseStages},
		{"sparse_issue_interval", p.SparseIssueInterval},
		{"sparse_latency", p.SparseLatency},
		{"sparse_stages", p.SparseStages},
		{"metadata_bits", p.MetadataBits}} {
		l.Positive(v.k, v.v)
	}
	if len(l) > 0 {
		return l
	}
	if dense.FMAs() != p.DenseIssueInterval*p.DenseFMAPerClk {
		l.Add("dense_issue_interval", "inconsistent: %s has %d FMAs, "+
			"which at %d FMA/clk takes %d cycles, not %d", dense,
			dense.FMAs(), p.DenseFMAPerClk,
			dense.FMAs()/p.DenseFMAPerClk, p.DenseIssueInterval)
	}
	if sparse.M != dense.M || sparse.N != dense.N ||
		sparse.K*pat.N != dense.K*pat.M {
		l.Add("sparse_shape", "inconsistent with dense_shape %s and "+
			"sparse_pattern %s: want m%dn%dk%d", dense, pat,
			dense.M, dense.N, dense.K*pat.M/pat.N)
	}
	if p.SparseLatency < p.DenseLatency {
		l.Add("sparse_latency", "must be >= dense_latency (%d): the "+
			"sparse path adds metadata decode and selector stages",
			p.DenseLatency)
	}
	if p.DenseLatency < p.DenseStages || p.SparseLatency < p.SparseStages {
		l.Add("dense_latency", "latency must be >= stage count")
	}
	if 1<<p.MetadataBits < pat.M {
		l.Add("metadata_bits", "%d bits cannot index %d positions",
			p.MetadataBits, pat.M)
	} else if w := metaFieldBits(pat); p.MetadataBits != w {
		l.Add("metadata_bits", "%s metadata is %d bits per kept value "+
			"(the PTX encoding Compress writes), not %d", pat, w,
			p.MetadataBits)
	}
	return l
}
