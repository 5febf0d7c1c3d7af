package report

import "testing"

func TestAxisLabel(t *testing.T) {
	for key, want := range map[string]string{
		"dram.bandwidth_gbps":            "dram.bandwidth_gbps (GB/s)",
		"shared_memory.bytes_per_clk":    "shared_memory.bytes_per_clk (B/clock)",
		"gpu.sm_count":                   "gpu.sm_count (SMs)",
		"tensorcore.fp16.sparse_pattern": "tensorcore.fp16.sparse_pattern",
	} {
		if got := AxisLabel(key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

func TestKeyWords(t *testing.T) {
	for key, want := range map[string]string{
		"dram.bandwidth_gbps":         "DRAM bandwidth (GB/s)",
		"gpu.sm_count":                "GPU SM count (SMs)",
		"shared_memory.bytes_per_clk": "shared memory bytes per clock (B/clock)",
		"l2.size_kb":                  "L2 size (KB)",
	} {
		if got := KeyWords(key); got != want {
			t.Errorf("KeyWords(%s) = %q, want %q", key, got, want)
		}
	}
}
