package configs

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ga102Configs are the built-in GA102 boards: none may take a value that
// describes the A100's chip from its GA100 base.
var ga102Configs = []string{"rtx3090", "rtx-a6000", "a40"}

// ampereCommon are the keys a GA102 config may inherit from the GA100
// base: what the two Ampere dies share (the SM's sub-partitions and
// register file, the tensor core's instruction shapes, patterns and
// pipeline fills, line and sector sizes, the shared-memory bank array),
// the run and selection controls, and the energy and area model's
// technology figures. Everything else that describes a chip (its clock,
// SMs, occupancy limits, tensor-core rates, memory sizes, L2 partitions,
// slices and latencies, DRAM kind, channels and bandwidth, kernel library,
// power limit) must be set by the GA102 config itself.
var ampereCommon = regexp.MustCompile(`^(` + strings.Join([]string{
	`gpu\.clock_policy`,
	`sm\.(sub_partitions|warp_schedulers|issue_per_clk|scheduler_policy|registers|register_file_bytes_per_clk|register_file_banks|barrier_latency|cta_launch_latency|cta_dispatch_interval)`,
	`tensorcore\.(fidelity|dual_side|mask_seed)`,
	`tensorcore\.\w+\.(selector_fan_in|operand_latency|metadata_decode_latency|mux_level_latency|dot_latency|accumulate_latency|dense_shape|sparse_pattern)`,
	`shared_memory\.(banks|ports|bytes_per_clk|latency|fill_arbitration|fill_packing)`,
	`l1\.(line_bytes|ways)`,
	`l2\.(line_bytes|sector_bytes|ways|write_ratio|writeback_entries)`,
	`crossbar\.port_bytes_per_clk`,
	`kernel\.(force|force_dense|force_sparse|split_k(\[\d+\])?|serial_split_k|stream_k|beta|l2_start|simulated_candidates)`,
	`sim\..*`,
	`power\.(clock_step_mhz|sm_leakage_w|sm_clock_pj_per_cycle|data_activity)`,
	`power\.energy\.(mma_pj_per_fma\.\w+|mma_data_share|sparse_select_pj_per_fma|metadata_decode_pj_per_mma|fp32_pj_per_op|rf_read_pj_per_byte|rf_write_pj_per_byte|issue_pj_per_instruction|smem_pj_per_wavefront|l1_pj_per_sector|l2_pj_per_sector|crossbar_pj_per_byte)`,
	`area\.(multiplier_um2\.\w+|adder_tree_um2_per_product|accumulator_adder_um2|register_bit_um2|mux2_bit_um2|sram_bit_um2|sram_array_efficiency|wire_pitch_um|operand_path_mm|wire_pj_per_bit_mm|register_pj_per_bit|sm_other_mm2)`,
}, "|") + `)$`)

// leaves are the paths of the values a config's files set (no sections).
func (ld *Loaded) leaves() []string {
	var out []string
	for p := range ld.origin {
		leaf := true
		for q := range ld.origin {
			if strings.HasPrefix(q, p+".") || strings.HasPrefix(q, p+"[") {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestGA102NoA100Leak fails when a GA102 config takes a value of its
// GA100 base that is not shared Ampere structure: an A100-only value
// (the L2's two partitions, 40 HBM channels, 164 KB carve-out, ...)
// leaks in unless the GA102 config sets it.
func TestGA102NoA100Leak(t *testing.T) {
	for _, name := range ga102Configs {
		ld, err := Load([]string{name}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		for _, p := range ld.leaves() {
			o := ld.Origin(p)
			if !strings.HasPrefix(o, "a100-") {
				continue
			}
			n++
			if !ampereCommon.MatchString(p) {
				t.Errorf("%s: %s comes from %s, an A100 value; set it in the GA102 config "+
					"with its GA102 source (or, if both dies share it, add it to ampereCommon)", name, p, o)
			}
		}
		if n == 0 {
			t.Errorf("%s: no value from the GA100 base: the test no longer sees the base", name)
		}
	}
}

// TestGA102LeakCheckCatches: the check above sees an A100 value when a
// GA102 overlay drops one of its keys (here the L2 partitions and DRAM
// channels), so it cannot pass vacuously.
func TestGA102LeakCheckCatches(t *testing.T) {
	src, _ := BuiltinSource("rtx3090")
	var kept []string
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "  partitions:") || strings.HasPrefix(line, "  channels:") {
			continue
		}
		kept = append(kept, line)
	}
	dir := t.TempDir()
	path := dir + "/ga102-dropped.yaml"
	if err := writeTestFile(path, strings.Join(kept, "\n")); err != nil {
		t.Fatal(err)
	}
	ld, err := Load([]string{path}, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var leaked []string
	for _, p := range ld.leaves() {
		if strings.HasPrefix(ld.Origin(p), "a100-") && !ampereCommon.MatchString(p) {
			leaked = append(leaked, p)
		}
	}
	want := "l2.partitions dram.channels"
	if got := strings.Join(leaked, " "); got != "dram.channels l2.partitions" {
		t.Errorf("leaked %q, want %s", got, want)
	}
	if ld.Config.Memory.L2.Partitions != 2 || ld.Config.Memory.DRAM.Channels != 40 {
		t.Errorf("the dropped keys did not fall back to the A100's 2 partitions and 40 channels")
	}
}

// TestGA102ShowsSources: config show's annotated YAML gives every value
// of a GA102 config a source comment (its name and description aside).
func TestGA102ShowsSources(t *testing.T) {
	for _, name := range ga102Configs {
		ld, err := Load([]string{name}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := ld.AnnotatedYAML()
		if err != nil {
			t.Fatal(err)
		}
		values := 0
		for _, line := range strings.Split(string(out), "\n") {
			s := strings.TrimSpace(line)
			if s == "" || strings.HasPrefix(s, "#") || strings.HasSuffix(s, ":") ||
				strings.HasPrefix(s, "name:") || strings.HasPrefix(s, "description:") {
				continue
			}
			values++
			i := strings.Index(s, " # ")
			if i < 0 || strings.Contains(s[i:], "(no source comment)") || strings.Contains(s[i:], "unset") {
				t.Errorf("%s: no source: %s", name, s)
			}
		}
		if values < 100 {
			t.Errorf("%s: only %d values printed", name, values)
		}
	}
}

func writeTestFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }
