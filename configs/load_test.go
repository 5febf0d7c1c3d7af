package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpu.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadConfigsNameFileLineAndKey(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		want []string
	}{
		"unknown key": {"base: a100-40gb\nl2:\n  sise_kb: 4\n",
			[]string{"gpu.yaml:3", "unknown key l2.sise_kb", "size_kb"}},
		"wrong type": {"base: a100-40gb\ngpu:\n  sm_count: lots\n",
			[]string{"gpu.yaml:3", "gpu.sm_count", "integer"}},
		"out of range": {"base: a100-40gb\ngpu:\n  sm_count: 0\n",
			[]string{"gpu.yaml:3", "gpu.sm_count", "> 0"}},
		"not power of two": {"base: a100-40gb\nl2:\n  ways: 12\n",
			[]string{"gpu.yaml:3", "l2.ways", "power of two"}},
		"carve-out not offered": {"base: a100-40gb\nshared_memory:\n  carveout_kb: 100\n  carveout_options_kb: [0, 64]\n",
			[]string{"gpu.yaml:3", "shared_memory.carveout_kb"}},
		"pattern does not fit the instruction": {"base: a100-40gb\ntensorcore:\n  fp16:\n    sparse_pattern: \"3:8\"\n",
			[]string{"gpu.yaml:4", "tensorcore.fp16.sparse_pattern", "not a whole number"}},
		"bad list element": {"base: a100-40gb\nkernel:\n  candidates:\n    - {bm: 100, bn: 128, bk: 32, warp_m: 64, warp_n: 64, stages: 3, modes: [dense], precisions: [fp16]}\n",
			[]string{"gpu.yaml:4", "kernel.candidates[0].bm"}},
		"partial file without a base": {"gpu:\n  sm_count: -3\n",
			[]string{"gpu.yaml:2", "gpu.sm_count", "keys are missing from every config", "base: a100-40gb"}},
		"negative area figure": {"base: a100-40gb\narea:\n  mux2_bit_um2: -0.1\n",
			[]string{"gpu.yaml:3", "area.mux2_bit_um2", "> 0"}},
		"area efficiency above 1": {"base: a100-40gb\narea:\n  sram_array_efficiency: 1.5\n",
			[]string{"gpu.yaml:3", "area.sram_array_efficiency", "(0, 1]"}},
		"unknown area key": {"base: a100-40gb\narea:\n  multiplier_um2:\n    fp8: 3\n",
			[]string{"gpu.yaml:4", "area.multiplier_um2.fp8"}},
		"not a mapping": {"- 1\n- 2\n", []string{"gpu.yaml:1", "mapping"}},
		"syntax":        {"gpu: [\n", []string{"gpu.yaml"}},
	} {
		_, err := Load([]string{writeConfig(t, c.text)}, nil)
		if err == nil {
			t.Errorf("%s: loaded", name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", name, err, w)
			}
		}
	}
}

func TestOverlaysAndSetsApplyInOrder(t *testing.T) {
	over := writeConfig(t, "l2:\n  ways: 8\ngpu:\n  sm_count: 54\n")
	ld, err := Load([]string{"a100-80gb", over}, []string{"gpu.sm_count=27",
		"kernel.candidates[0].stages=4"})
	if err != nil {
		t.Fatal(err)
	}
	c := ld.Config
	if c.Name != "a100-80gb" || c.Memory.L2.Ways != 8 || c.GPU.SMCount != 27 ||
		c.Memory.DRAM.BandwidthGBps != 2039 || c.Kernel.Candidates[0].Stages != 4 {
		t.Fatalf("effective config wrong: %+v", c)
	}
	if got := ld.Origin("l2.ways"); !strings.Contains(got, "gpu.yaml:2") {
		t.Errorf("l2.ways origin %q", got)
	}
	if got := ld.Origin("gpu.sm_count"); !strings.Contains(got, "--set") {
		t.Errorf("gpu.sm_count origin %q", got)
	}
	if got := ld.Origin("dram.bandwidth_gbps"); !strings.Contains(got, "a100-80gb") {
		t.Errorf("dram origin %q", got)
	}
	if !strings.Contains(string(ld.YAML()), "sm_count: 27") {
		t.Error("YAML does not show the override")
	}
}

func TestEffectiveYAMLLoadsBack(t *testing.T) {
	ld, err := Load([]string{"h100-sxm"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load([]string{writeConfig(t, string(ld.YAML()))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.YAML()[strings.Index(string(again.YAML()), "name:"):]) !=
		string(ld.YAML()[strings.Index(string(ld.YAML()), "name:"):]) {
		t.Fatal("effective config does not round-trip")
	}
}

func TestBadSets(t *testing.T) {
	for set, want := range map[string]string{
		"l2":                          "wrong type",
		"nope.key=1":                  "unknown key nope",
		"=3":                          "key.path=value",
		"kernel.candidates[99].bm=64": "candidates[99",
		"tensorcore.fidelity=fast":    "batched, instruction",
		"sim.memory_granularity=x":    "fast, detailed",
		"kernel.force_dense=64x64x64_32x32_s6_splitkx":   "key kernel.force_dense: \"64x64x64_32x32_s6_splitkx\": the split-K suffix",
		"kernel.force_sparse=9x9x9_splitk2":              "key kernel.force_sparse: \"9x9x9\" is not a candidate",
		"kernel.force=64x64x64_32x32_s6_splitk99":        "split-K 99",
		"kernel.force=64x64x64_32x32_s6_serialk0":        "key kernel.force: \"64x64x64_32x32_s6_serialk0\": the split-K suffix must be _serialkN",
		"kernel.force_dense=64x64x64_32x32_s6_serialkx":  "the split-K suffix must be _serialkN",
		"kernel.force=64x64x64_32x32_s6_streamk2":        "the stream-K suffix is _streamk with nothing after it",
		"kernel.force=9x9x9_streamk":                     "\"9x9x9\" is not a candidate",
		"kernel.force_sparse=64x64x64_32x32_s6_serialk1": "key kernel.force_sparse: \"64x64x64_32x32_s6_serialk1\": serial split-K needs N >= 2 splits",
		"kernel.stream_k=maybe":                          "kernel.stream_k",
		"kernel.serial_split_k=2":                        "kernel.serial_split_k",
	} {
		if !strings.Contains(set, "=") {
			set += "=[1]"
		}
		_, err := Load(nil, []string{set})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: want error containing %q, got %v", set, want, err)
		}
	}
}

// TestParseKernel checks names against hand-written expectations: each
// schedule's suffix, the tile before it, and the splits after it.
func TestParseKernel(t *testing.T) {
	for s, want := range map[string]KernelName{
		"128x128x32_64x64_s4":           {Tile: "128x128x32_64x64_s4"},
		"128x128x32_64x64_s4_splitk3":   {"128x128x32_64x64_s4", SuffixSplitK, 3},
		"128x128x32_64x64_s4_serialk16": {"128x128x32_64x64_s4", SuffixSerialK, 16},
		"128x128x32_64x64_s4_streamk":   {"128x128x32_64x64_s4", SuffixStreamK, 0},
	} {
		got, err := ParseKernel(s)
		if err != nil || got != want {
			t.Errorf("ParseKernel(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"t_splitk", "t_splitk0", "t_serialk", "t_serialk-1",
		"t_serialk2x", "t_streamk1", "t_streamk_splitk"} {
		if k, err := ParseKernel(s); err == nil {
			t.Errorf("ParseKernel(%q) = %+v, want an error", s, k)
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load([]string{"/no/such.yaml"}, nil)
	if err == nil || !strings.Contains(err.Error(), "/no/such.yaml") {
		t.Fatalf("got %v", err)
	}
}
