package memory_test

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
)

// TestBadConfig loads the built-in configs with one bad value each and
// checks that the error names the key and where it came from.
func TestBadConfig(t *testing.T) {
	tests := []struct {
		set  string
		want string
	}{
		{"l2.bytes_per_clk=0", "key l2.bytes_per_clk: must be > 0"},
		{"dram.bandwidth_gbps=0", "key dram.bandwidth_gbps: must be > 0"},
		{"crossbar.port_bytes_per_clk=0", "key crossbar.port_bytes_per_clk"},
		{"l2.efficiency=1.5", "key l2.efficiency: must be in (0, 1]"},
		{"l2.ways=12", "key l2.ways: must be a power of two"},
		{"l2.size_kb=30720", "key l2.size_kb: each slice"},
		{"shared_memory.carveout_kb=50", "key shared_memory.carveout_kb: must be one of"},
		{"l1.total_kb=128", "key shared_memory.carveout_options_kb: option 132 KB exceeds l1.total_kb"},
		{"l2.size_kb=83886080", "key l2.size_kb: 83886080 KB is larger than the DRAM"},
		{"l1.line_bytes=64", "key l1.line_bytes: L1 lines and sectors"},
		{"l2.far_latency=100", "key l2.far_latency: must be >= l2.near_latency"},
		// Efficiencies that take the sustained bandwidth under its floor
		// (these hung a 256^3 run).
		{"dram.efficiency=1e-300", "key dram.efficiency: 1e-300 of dram.bandwidth_gbps 1555 sustains"},
		{"l2.efficiency=1e-300", "key l2.efficiency: 1e-300 of l2.bytes_per_clk"},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			_, err := configs.Load([]string{"a100-40gb"}, []string{tc.set})
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "--set") &&
					!strings.Contains(err.Error(), ".yaml") {
				t.Errorf("error %q, want %q with its origin", err, tc.want)
			}
		})
	}
	for _, name := range configs.Builtin() {
		if _, err := configs.Load([]string{name}, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
