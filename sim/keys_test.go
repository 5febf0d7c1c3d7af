package sim

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// keyCase sets one or more keys and says how the cycles must move
// against the base (with on set in both, when the key binds only there):
// slower, faster, or just differ (no obvious direction).
type keyCase struct {
	sets []string
	want int // +1 slower, -1 faster, 0 different
	on   []string
}

// keyRun is the cycles of one GEMM of precision p in one mode on the
// instruction-level SM, through the whole runner (kernel selection,
// ensembles), with a pinned kernel.
func keyRun(t *testing.T, p tensorcore.Precision, mode tensorcore.Mode, shape [3]int,
	kernel string, sets ...string) uint64 {
	t.Helper()
	job := gemmJob(shape)
	job.Workloads[0].GEMMs[0].Precision = p
	job.Workloads[0].GEMMs[0].Sparsity = workloads.SparsityFor(p) // the config's pattern
	job.Modes = []tensorcore.Mode{mode}
	sets = append([]string{"kernel.force=" + kernel}, sets...)
	return run(t, job, sets...).Results[0].Cycles
}

// checkKeys runs every case against base and reports the ones that move
// the wrong way or not at all.
func checkKeys(t *testing.T, what string, base uint64, cases []keyCase, cycles func(...string) uint64) {
	t.Helper()
	bases := map[string]uint64{} // the base of each on: list, run once
	for _, c := range cases {
		base := base
		if len(c.on) > 0 {
			k := strings.Join(c.on, "\x00")
			b, ok := bases[k]
			if !ok {
				b = cycles(c.on...)
				bases[k] = b
			}
			base = b
		}
		got := cycles(append(append([]string{}, c.on...), c.sets...)...)
		switch {
		case got == base:
			t.Errorf("%s %v: %d cycles, as without it: the key is dead", what, c.sets, got)
		case c.want > 0 && got < base:
			t.Errorf("%s %v: %d cycles, faster than %d: want slower", what, c.sets, got, base)
		case c.want < 0 && got > base:
			t.Errorf("%s %v: %d cycles, slower than %d: want faster", what, c.sets, got, base)
		}
	}
}

// deadKeyExceptions are config keys that do not change a GEMM's timing on
// the instruction-level SM, and why that is not a bug.
var deadKeyExceptions = map[string]string{
	"sm.max_threads": "must equal max_warps x 32 (configs validate it), so it " +
		"moves only with sm.max_warps (covered together)",
	"shared_memory.carveout_options_kb": "the carve-outs carveout_kb may take " +
		"(a validation list); micro mem's L1 capacity uses its smallest",
	"tensorcore.fidelity": "selects per-MMA stage hazards or the batched " +
		"interval and latency, which agree on a stream of one datapath's MMAs " +
		"(docs/tensorcore.md); the instruction-level SM issues only such streams",
}

// Every sm.*, shared_memory.* and tensorcore.* key of the shipped
// configs, and sim.seed, changes the cycles of a small GEMM on the
// instruction-level SM, in the expected direction where one is obvious:
// fewer resources or more latency slower, more issue slots faster where
// issue binds. The test lists the keys from the config types, so a new
// key without a case here fails it.
func TestEveryKeyDrivesTheInstructionSM(t *testing.T) {
	t.Parallel() // long: overlaps the other long tests on a second core
	if testing.Short() {
		t.Skip("about 90 small instruction-level runs")
	}
	covered := map[string]bool{}
	cover := func(cases []keyCase, prefix string) {
		for _, c := range cases {
			for _, s := range c.sets {
				k := strings.SplitN(s, "=", 2)[0]
				if strings.HasPrefix(k, prefix) {
					covered[k] = true
				}
			}
		}
	}

	// SM and shared-memory keys: 512x512x256 dense on 4 SMs (16 CTAs of
	// 128x128x32_64x64_s5, two per SM: two waves).
	const smKernel = "128x128x32_64x64_s5"
	smRun := func(sets ...string) uint64 {
		return keyRun(t, tensorcore.FP16, tensorcore.Dense, [3]int{512, 512, 256}, smKernel,
			append([]string{"gpu.sm_count=4"}, sets...)...)
	}
	smCases := []keyCase{
		{sets: []string{"sm.sub_partitions=2"}, want: +1},
		{sets: []string{"sm.scheduler_policy=lrr"}, want: 0},
		{sets: []string{"sm.max_ctas=1"}, want: +1},
		{sets: []string{"sm.registers=32768"}, want: +1},
		{sets: []string{"sm.register_file_bytes_per_clk=64"}, want: +1},
		// The same width in 8 banks of 48 B: an HMMA's operands no longer
		// split evenly, and a bank's share rounds up to whole cycles.
		{sets: []string{"sm.register_file_banks=8"}, want: +1},
		{sets: []string{"sm.barrier_latency=200"}, want: +1},
		{sets: []string{"sm.cta_launch_latency=2000"}, want: +1},
		{sets: []string{"sm.cta_dispatch_interval=500"}, want: +1},
		{sets: []string{"sm.kernel_launch_latency=5000"}, want: +1},
		{sets: []string{"shared_memory.carveout_kb=100"}, want: +1},
		{sets: []string{"shared_memory.bytes_per_clk=32"}, want: +1},
		// A second port serves the 64-B fill packets two per cycle.
		{sets: []string{"shared_memory.ports=2"}, want: -1},
		{sets: []string{"shared_memory.latency=200"}, want: +1},
		{sets: []string{"shared_memory.fill_arbitration=" + otherArbitration()}, want: 0},
		// The tile's 64-B A and B rows arrive in half-used packets: packed
		// two to a bank-array cycle they leave the loads more room.
		{sets: []string{"shared_memory.fill_packing=true"}, want: -1},
	}
	base := smRun()
	checkKeys(t, "fp16 dense", base, smCases, smRun)
	// Fewer or narrower banks serve fewer bytes per cycle (bytes_per_clk
	// narrowed with them, as the loader requires) and conflict more.
	bankCases := []keyCase{{sets: []string{"shared_memory.banks=8", "shared_memory.bytes_per_clk=32"}, want: +1},
		{sets: []string{"shared_memory.bank_bytes=1", "shared_memory.bytes_per_clk=32"}, want: +1}}
	checkKeys(t, "fp16 dense", base, bankCases, smRun)
	cover(bankCases, "shared_memory.")
	cover(smCases, "sm.")
	cover(smCases, "shared_memory.")

	// Issue slots bind once the tensor core takes an MMA every cycle (8x
	// the multipliers and operand paths) and the register file, shared
	// memory and the SM's L2 port keep up: a warp's 102 instructions per
	// 64 MMAs then need more than one issue slot per cycle, and more
	// schedulers or a wider issue are faster.
	fast := []string{"tensorcore.fp16.multipliers=2048", "tensorcore.fp16.a_operand_bytes_per_clk=512",
		"tensorcore.fp16.b_operand_bytes_per_clk=512", "tensorcore.fp16.accumulate_per_clk=128",
		"sm.register_file_bytes_per_clk=8192", "shared_memory.ports=8", "shared_memory.bytes_per_clk=1024",
		"crossbar.port_bytes_per_clk=1024", "gpu.sm_count=4"}
	issueRun := func(sets ...string) uint64 {
		return keyRun(t, tensorcore.FP16, tensorcore.Dense, [3]int{512, 512, 1024}, smKernel,
			append(append([]string{}, fast...), sets...)...)
	}
	issueCases := []keyCase{
		{sets: []string{"sm.warp_schedulers=2"}, want: -1},
		{sets: []string{"sm.issue_per_clk=2"}, want: -1},
	}
	checkKeys(t, "fp16 dense, issue-bound", issueRun(), issueCases, issueRun)
	cover(issueCases, "sm.")

	// The FP32 pipe's lanes bind the CUDA-core GEMV at N = 8, whose
	// FFMAs and conversions outlast its bytes.
	gemvRun := func(sets ...string) uint64 {
		return keyRun(t, tensorcore.FP16, tensorcore.Dense, [3]int{256, 8, 4096}, configs.GEMVName,
			append([]string{"gpu.sm_count=4"}, sets...)...)
	}
	gemvCases := []keyCase{{sets: []string{"sm.fp32_lanes=32"}, want: -1}}
	checkKeys(t, "fp16 dense GEMV", gemvRun(), gemvCases, gemvRun)
	cover(gemvCases, "sm.")

	// Tensor-core keys: a small sparse GEMM of each precision on 4 SMs
	// (4 CTAs, one per SM, no split-K: the datapath is per-SM, and 108
	// SMs cost 3x the CPU of 16 for the same property); its datapath keys bind
	// at these settings: a rate below what the instruction needs, or a
	// longer fill.
	kernels := map[tensorcore.Precision]string{tensorcore.FP16: "128x128x64_64x64_s3",
		tensorcore.BF16: "128x128x64_64x64_s3", tensorcore.TF32: "128x128x32_64x64_s3",
		tensorcore.INT8: "128x128x128_64x64_s3"}
	shapes := map[tensorcore.Precision]string{tensorcore.FP16: "m16n8k8",
		tensorcore.BF16: "m16n8k8", tensorcore.TF32: "m16n8k4", tensorcore.INT8: "m16n8k16"}
	patterns := map[tensorcore.Precision]string{tensorcore.FP16: "1:4",
		tensorcore.BF16: "1:4", tensorcore.TF32: "1:4", tensorcore.INT8: "1:4"}
	// tf32's 1:2 needs only 2 selector inputs, the smallest fan-in: it
	// binds under 1:4 with a B path wide enough for 1:4's chunks.
	fanOn := map[tensorcore.Precision][]string{tensorcore.TF32: {"tensorcore.tf32.sparse_pattern=1:4",
		"tensorcore.tf32.b_operand_bytes_per_clk=128"}}
	for _, p := range tensorcore.Precisions {
		pre := "tensorcore." + p.String() + "."
		pRun := func(sets ...string) uint64 {
			return keyRun(t, p, tensorcore.Sparse, [3]int{256, 256, 1024}, kernels[p],
				append([]string{"gpu.sm_count=4"}, sets...)...)
		}
		cases := []keyCase{
			{sets: []string{pre + "multipliers=64"}, want: +1},
			{sets: []string{pre + "a_operand_bytes_per_clk=16"}, want: +1},
			{sets: []string{pre + "b_operand_bytes_per_clk=16"}, want: +1},
			{sets: []string{pre + "selector_fan_in=2"}, want: +1, on: fanOn[p]},
			{sets: []string{pre + "metadata_bits_per_clk=8"}, want: +1},
			{sets: []string{pre + "accumulate_per_clk=2"}, want: +1},
			{sets: []string{pre + "operand_latency=400"}, want: +1},
			{sets: []string{pre + "metadata_decode_latency=400"}, want: +1},
			{sets: []string{pre + "mux_level_latency=200"}, want: +1},
			{sets: []string{pre + "dot_latency=400"}, want: +1},
			{sets: []string{pre + "accumulate_latency=400"}, want: +1},
			{sets: []string{pre + "dense_shape=" + shapes[p]}, want: 0},
			{sets: []string{pre + "sparse_pattern=" + patterns[p]}, want: 0},
		}
		checkKeys(t, p.String()+" sparse", pRun(), cases, pRun)
		cover(cases, "tensorcore.")
	}

	// The tensor core's fidelity and the dual-side keys on fp16 sparse;
	// mask_seed against dual-side at the default seed; sim.seed through
	// a jitter ensemble.
	fpRun := func(sets ...string) uint64 {
		return keyRun(t, tensorcore.FP16, tensorcore.Sparse, [3]int{256, 256, 1024}, kernels[tensorcore.FP16],
			append([]string{"gpu.sm_count=4"}, sets...)...)
	}
	tcCases := []keyCase{{sets: []string{"tensorcore.dual_side=true"}, want: 0}}
	checkKeys(t, "fp16 sparse", fpRun(), tcCases, fpRun)
	// mask_seed draws dual-side's synthetic masks: it moves the product
	// count per MMA that dual-side times every MMA with.
	products := func(seed string) int {
		job := gemmJob([3]int{256, 256, 1024})
		job.Modes = []tensorcore.Mode{tensorcore.Sparse}
		return run(t, job, "gpu.sm_count=4", "tensorcore.dual_side=true",
			"tensorcore.mask_seed="+seed).Results[0].DualProducts
	}
	if a, b := products("1"), products("7"); a == b {
		t.Errorf("tensorcore.mask_seed 1 and 7: %d products per MMA both", a)
	}
	covered["tensorcore.mask_seed"] = true
	checkMaxWarps(t, smKernel)
	covered["sm.max_warps"] = true
	ens := func(sets ...string) uint64 { return fpRun(append([]string{"sim.jitter_runs=3"}, sets...)...) }
	simCases := []keyCase{{sets: []string{"sim.seed=2"}, want: 0}}
	checkKeys(t, "fp16 sparse, 3-run ensemble", ens(), simCases, ens)
	cover(tcCases, "tensorcore.")
	cover(simCases, "sim.seed")

	for _, k := range shippedKeys(t) {
		if !covered[k] && deadKeyExceptions[k] == "" {
			t.Errorf("%s: no case shows it changing the instruction-level SM's timing", k)
		}
	}
}

// shippedKeys are the sm.*, shared_memory.* and tensorcore.* keys of the
// config types (per precision for the tensor core), and sim.seed.
func shippedKeys(t *testing.T) []string {
	t.Helper()
	keys := []string{"sim.seed"}
	keys = append(keys, yamlKeys("sm.", reflect.TypeOf(configs.SMConfig{}))...)
	keys = append(keys, yamlKeys("shared_memory.", reflect.TypeOf(memory.SharedMemoryConfig{}))...)
	tc := reflect.TypeOf(tensorcore.Config{})
	for i := 0; i < tc.NumField(); i++ {
		f := tc.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if f.Type == reflect.TypeOf(tensorcore.PrecisionConfig{}) {
			keys = append(keys, yamlKeys("tensorcore."+name+".", f.Type)...)
			continue
		}
		keys = append(keys, "tensorcore."+name)
	}
	return keys
}

func yamlKeys(prefix string, t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if name := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; name != "" && name != "-" {
			out = append(out, prefix+name)
		}
	}
	return out
}

// checkMaxWarps: sm.max_warps (with max_threads, which must equal it x
// 32) limits occupancy. At the defaults shared memory and registers bind
// first (two 4-warp CTAs per SM), so the check lifts those limits and
// keeps only 4-warp tiles: 8 warps then allow two CTAs, 4 one, slower.
func checkMaxWarps(t *testing.T, kernel string) {
	t.Helper()
	cycles := func(warps int) uint64 {
		f := t.TempDir() + "/warps.yaml"
		yaml := fmt.Sprintf("base: a100-40gb\nsm:\n  max_warps: %d\n  max_threads: %d\n"+
			"kernel:\n  candidates:\n    - {bm: 128, bn: 128, bk: 32, warp_m: 64, warp_n: 64, "+
			"stages: 5, modes: [dense], precisions: [fp16]}\n", warps, 32*warps)
		if err := os.WriteFile(f, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		ld, err := configs.Load([]string{f}, []string{
			"kernel.force=" + kernel, "gpu.sm_count=4"})
		if err != nil {
			t.Fatal(err)
		}
		job := gemmJob([3]int{512, 512, 256})
		job.Modes = []tensorcore.Mode{tensorcore.Dense}
		rep, err := Run(ld, job)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Results[0].Cycles
	}
	if two, one := cycles(8), cycles(4); one <= two {
		t.Errorf("sm.max_warps 4: %d cycles, 8: %d: want slower (one CTA per SM)", one, two)
	}
}

// otherArbitration is the fill arbitration the shipped config does not use.
func otherArbitration() string {
	if ld, err := configs.Load(nil, nil); err == nil &&
		ld.Config.Memory.SharedMemory.FillArbitration == memory.LoadsFirst {
		return memory.FillsFirst
	}
	return memory.LoadsFirst
}
