package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/tensorcore/unit"
)

func init() {
	registerMicro(&command{name: "tc", summary: "tensor-core peak throughput " +
		"and latency, dense and sparse", run: runMicroTC})
}

// microTCOutput is the JSON document of stcsim micro tc.
type microTCOutput struct {
	Tool       string             `json:"tool"`
	Provenance *sim.Provenance    `json:"provenance"`
	Config     string             `json:"config"`
	Sources    []string           `json:"sources"`
	Results    []unit.MicroResult `json:"results"`
	// Scheduler is the same benchmark issued by warps through the
	// instruction-level SM's schedulers, scoreboards and register files.
	Scheduler []sim.MicroSched `json:"scheduler"`
}

func runMicroTC(args []string) int {
	fs := newFlagSet("micro tc", "[--config NAME|PATH]... [--set key=value]... "+
		"[--precision P] [--mode dense|sparse|both] [--format table|json]")
	var cf configFlags
	cf.add(fs)
	precision := fs.String("precision", "all", "fp16, bf16, tf32, int8 or all")
	mode := fs.String("mode", "both", "dense, sparse, both, or dual (the hypothetical "+
		"dual-side datapath, independent masks)")
	format := fs.String("format", "table", "table or json")
	mmas := fs.Int("mmas", unit.DefaultMicroOptions.MMAsPerTC,
		"independent MMAs per tensor core in the throughput run")
	chain := fs.Int("chain", unit.DefaultMicroOptions.Chain,
		"length of the dependent chain in the latency run")
	var maxWork float64
	addMaxWork(fs, &maxWork)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	precs, modes, err := microTCSelection(*precision, *mode, *format)
	if err == nil && (*mmas < 1 || *chain < 1 || *mmas > maxMicroCount ||
		*chain > maxMicroCount) {
		err = fmt.Errorf("--mmas and --chain must be in 1..%d", maxMicroCount)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "stcsim micro tc: %v\n", flagged(err))
		return exitUsage
	}
	ld, code := cf.load()
	if ld == nil {
		return code
	}
	w := sim.EstimateMicroTC(ld.Config, len(precs)*len(modes), *mmas, *chain)
	if err := checkEstimate(w, maxWork, "the benchmark", "lower --mmas or --chain "+
		"(tensorcore.fidelity=instruction simulates every MMA of --mmas)"); err != nil {
		fmt.Fprintf(os.Stderr, "stcsim micro tc: %v\n", flagged(err))
		return exitUsage
	}
	out, err := microTC(ld, precs, modes, unit.MicroOptions{MMAsPerTC: *mmas, Chain: *chain})
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro tc:", flagged(err))
		return exitInternal
	}
	if *format == "json" {
		return printMicroJSON("tc", out)
	}
	writeMicroTCTable(os.Stdout, out)
	return exitOK
}

// maxMicroCount bounds --mmas and --chain: a million MMAs is seconds of
// simulation, far more than a microbenchmark needs to reach steady state.
const maxMicroCount = 1 << 20

func microTCSelection(precision, mode, format string) ([]tensorcore.Precision, []tensorcore.Mode, error) {
	precs := tensorcore.Precisions
	if precision != "all" {
		p, err := tensorcore.ParsePrecision(precision)
		if err != nil {
			return nil, nil, fmt.Errorf("--precision: %w", err)
		}
		precs = []tensorcore.Precision{p}
	}
	modes := tensorcore.Modes
	if mode != "both" {
		m, err := tensorcore.ParseMode(mode)
		if mode == "dual" {
			m, err = tensorcore.DualSide, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--mode: unknown mode %s (want dense, sparse, both or dual)", configs.Quote(mode))
		}
		modes = []tensorcore.Mode{m}
	}
	if format != "table" && format != "json" {
		return nil, nil, fmt.Errorf("--format: unknown format %s (want table or json)", configs.Quote(format))
	}
	return precs, modes, nil
}

func microTC(ld *configs.Loaded, precs []tensorcore.Precision, modes []tensorcore.Mode,
	opt unit.MicroOptions) (*microTCOutput, error) {
	c := ld.Config
	out := &microTCOutput{Tool: "stcsim " + sim.Version, Config: c.Name, Sources: ld.Sources,
		Provenance: sim.ConfigProvenance(ld, os.Args)}
	for _, p := range precs {
		for _, m := range modes {
			r, err := unit.MicroTCWith(c.TensorCore, c.GPU.SMCount,
				c.SM.SubPartitions, c.GPU.ClockMHz, p, m, opt)
			if err != nil {
				return nil, err
			}
			out.Results = append(out.Results, r)
			sr, err := sim.MicroScheduler(c, p, m)
			if err != nil {
				return nil, err
			}
			out.Scheduler = append(out.Scheduler, sr)
		}
	}
	return out, nil
}

func writeMicroTCTable(w io.Writer, out *microTCOutput) {
	fmt.Fprintf(w, "%s, %s; TFLOPS (TOPS for int8) are dense-equivalent\n", out.Tool, out.Config)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "precision\tmode\tpattern\tTFLOPS\tFMA/clk/SM\tlatency (cycles)\t"+
		"derived interval\tderived latency\tset by\tfidelity\t")
	for _, r := range out.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%d\t%d\t%s\t%s\t\n", r.Precision, r.Mode,
			orDash(r.Pattern), r.TFLOPS, r.FMAPerClkPerSM, r.LatencyCycles, r.IssueInterval,
			r.DerivedLatency, shortKeys(r.Binding), r.Fidelity)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nthrough the warp schedulers (instruction-level SM):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "precision\tmode\tdependent issue (cycles)\t"+
		"independent issue (cycles/MMA/sub-partition)\tTFLOPS\t8 warps x 2 MMAs (FMA/clk/SM)\t")
	for _, r := range out.Scheduler {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.2f\t%.1f\t%.0f\t\n", r.Precision, r.Mode,
			r.DependentLatency, r.IndependentInterval, r.TFLOPS, r.PairsFMAPerClkPerSM)
	}
	tw.Flush()
	fmt.Fprintln(w, "dependent: one warp, each MMA on the previous one's accumulator;\n"+
		"independent: one warp per sub-partition, 16 accumulators;\n"+
		"8 warps x 2 MMAs: two warps per sub-partition on two accumulators each, as Sun et al.\n"+
		"(arXiv 2206.02874) measure (fp16 mma.sp.m16n8k32: 1979); sources: docs/tensorcore.md")
	fmt.Fprintln(w, "\nset by: mult = multipliers, A/B = a/b_operand_bytes_per_clk, meta = "+
		"metadata_bits_per_clk, fan-in = selector passes, acc = accumulate_per_clk;\n"+
		"the derivation and each key's source: stcsim config show")
}

// shortKeys abbreviates the structural keys that set an interval.
func shortKeys(keys []string) string {
	short := map[string]string{"multipliers": "mult", "a_operand_bytes_per_clk": "A",
		"b_operand_bytes_per_clk": "B", "metadata_bits_per_clk": "meta",
		"selector_fan_in": "fan-in", "accumulate_per_clk": "acc"}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = short[k]
	}
	return strings.Join(out, "=")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
