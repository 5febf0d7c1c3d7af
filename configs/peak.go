package configs

import "github.com/stcsim/stcsim/tensorcore"

// PeakTFLOPS is the config's compute roof of one precision at clockMHz
// (0: gpu.clock_mhz), in TFLOPS (dense-equivalent when sparse): SMs x
// tensor cores per SM x the logical FMAs of one instruction of the
// derived datapath / its issue interval x 2 FLOP x clock. It is derived
// from the tensor-core keys, not simulated (report's roofline and the
// records' useful utilization use it; a test holds it to the simulated
// microbenchmark).
func (c *Config) PeakTFLOPS(precision tensorcore.Precision, sparse bool, clockMHz int) (float64, error) {
	pr, err := c.TensorCore.Get(precision)
	if err != nil {
		return 0, err
	}
	mode := tensorcore.Dense
	if sparse {
		mode = tensorcore.Sparse
	}
	dp, err := tensorcore.Derive(pr, precision, mode, pr.Pattern(), 0)
	if err != nil {
		return 0, err
	}
	if clockMHz <= 0 {
		clockMHz = c.GPU.ClockMHz
	}
	perClk := float64(dp.Shape.FMAs()) / float64(dp.Interval)
	return float64(c.GPU.SMCount) * float64(c.SM.SubPartitions) *
		perClk * 2 * float64(clockMHz) * 1e6 / 1e12, nil
}
