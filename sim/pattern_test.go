package sim

import (
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// TestDatapathKeysAreLive: every structural key of the tensor core, set
// so that it binds (a rate below what the instruction needs, or a longer
// fill), changes the cycles of a sparse fp16 GEMM (on 16 SMs, one CTA
// each: the datapath is per SM).
func TestDatapathKeysAreLive(t *testing.T) {
	t.Parallel()
	job := gemmJob([3]int{512, 512, 512})
	job.Modes = []tensorcore.Mode{tensorcore.Sparse}
	force := "kernel.force=128x128x64_64x64_s3"
	base := run(t, job, force, "gpu.sm_count=16").Results[0].Cycles
	for _, set := range []string{
		"multipliers=128", "a_operand_bytes_per_clk=16", "b_operand_bytes_per_clk=16",
		"selector_fan_in=2", "metadata_bits_per_clk=16", "accumulate_per_clk=4",
		"operand_latency=200", "metadata_decode_latency=200", "mux_level_latency=100",
		"dot_latency=200", "accumulate_latency=200", "dense_shape=m16n8k8",
	} {
		got := run(t, job, force, "gpu.sm_count=16", "tensorcore.fp16."+set).Results[0].Cycles
		if got == base {
			t.Errorf("tensorcore.fp16.%s: %d cycles, as without it", set, got)
		}
	}
}
