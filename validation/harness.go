package validation

import (
	"fmt"

	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/tensorcore"
)

// harnessOperands are the operand values each harness fills its matrices
// with, which set the tensor cores' bit activity and so, under a power
// limit, the clock (energy.ToggleRate). A harness not listed keeps the
// config's power.data_activity.
var harnessOperands = map[string]struct {
	ops    energy.Operands
	source string
}{
	// CUTLASS profiler, --initialization=random (its default): fp16 from
	// uniform(-3, 3) with int_scale 0, truncated to integers by an int64
	// cast (tools/profiler device_allocation / options.cu set_uniform(-3,
	// 3, 0); util/reference RandomUniformFunc), so 0 twice as likely.
	"cutlass_profiler": {energy.Operands{Name: "CUTLASS profiler integers in [-2, 2]",
		Values: []float64{-2, -1, 0, 1, 2}, Probs: []float64{1.0 / 6, 1.0 / 6, 1.0 / 3, 1.0 / 6, 1.0 / 6}},
		"CUTLASS profiler: uniform(-3, 3) truncated to integers"},
	// CUDALibrarySamples cuSPARSELt/matmul/matmul_example.cpp:
	// std::rand() % 5 - 2.
	"cusparselt_sample": {energy.Operands{Name: "cuSPARSELt sample integers in [-2, 2]",
		Values: []float64{-2, -1, 0, 1, 2}, Probs: []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
		"cuSPARSELt matmul example: rand() % 5 - 2"},
	// PyTorch benchmarks draw their operands with torch.randn.
	"torch":      {energy.Operands{Name: "torch.randn", Normal: true}, "torch.randn"},
	"torch_sync": {energy.Operands{Name: "torch.randn", Normal: true}, "torch.randn"},
}

// activitySets is the power.data_activity of mode m's harness for the
// row's precision (nil when the harness does not say what it multiplies).
func activitySets(p Point, m tensorcore.Mode) ([]string, string, error) {
	h, ok := harnessOperands[p.HarnessOf(m)]
	if !ok {
		return nil, "", nil
	}
	if h.ops.Normal && p.Precision == tensorcore.INT8 {
		return nil, "", nil
	}
	a, err := energy.ToggleRate(h.ops, p.Precision)
	if err != nil {
		return nil, "", err
	}
	return []string{fmt.Sprintf("power.data_activity=%.4f", a)},
		fmt.Sprintf("operands %s: bit activity %.3f", h.source, a), nil
}
