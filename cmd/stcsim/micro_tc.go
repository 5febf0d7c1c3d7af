package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
)

func init() {
	registerMicro(&command{name: "tc", summary: "tensor-core peak throughput " +
		"and latency, dense and sparse", run: runMicroTC})
}

// microTCOutput is the JSON document of stcsim micro tc.
type microTCOutput struct {
	Tool    string                   `json:"tool"`
	Config  string                   `json:"config"`
	Sources []string                 `json:"sources"`
	Results []tensorcore.MicroResult `json:"results"`
}

func runMicroTC(args []string) int {
	fs := newFlagSet("micro tc", "[--config NAME|PATH]... [--set key=value]... "+
		"[--precision P] [--mode dense|sparse|both] [--format table|json]")
	var cf configFlags
	cf.add(fs)
	precision := fs.String("precision", "all", "fp16, bf16, tf32, int8 or all")
	mode := fs.String("mode", "both", "dense, sparse or both")
	format := fs.String("format", "table", "table or json")
	mmas := fs.Int("mmas", tensorcore.DefaultMicroOptions.MMAsPerTC,
		"independent MMAs per tensor core in the throughput run")
	chain := fs.Int("chain", tensorcore.DefaultMicroOptions.Chain,
		"length of the dependent chain in the latency run")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	precs, modes, err := microTCSelection(*precision, *mode, *format)
	if err == nil && (*mmas < 1 || *chain < 1 || *mmas > maxMicroCount ||
		*chain > maxMicroCount) {
		err = fmt.Errorf("--mmas and --chain must be in 1..%d", maxMicroCount)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "stcsim micro tc: %v\n", err)
		return exitUsage
	}
	ld, code := cf.load()
	if ld == nil {
		return code
	}
	out, err := microTC(ld, precs, modes, tensorcore.MicroOptions{MMAsPerTC: *mmas, Chain: *chain})
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro tc:", err)
		return exitInternal
	}
	if *format == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim micro tc:", err)
			return exitInternal
		}
		return exitOK
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
		if err != nil {
			return nil, nil, fmt.Errorf("--mode: unknown mode %q (want dense, sparse or both)", mode)
		}
		modes = []tensorcore.Mode{m}
	}
	if format != "table" && format != "json" {
		return nil, nil, fmt.Errorf("--format: unknown format %q (want table or json)", format)
	}
	return precs, modes, nil
}

func microTC(ld *configs.Loaded, precs []tensorcore.Precision, modes []tensorcore.Mode,
	opt tensorcore.MicroOptions) (*microTCOutput, error) {
	c := ld.Config
	out := &microTCOutput{Tool: "stcsim " + sim.Version, Config: c.Name, Sources: ld.Sources}
	for _, p := range precs {
		for _, m := range modes {
			r, err := tensorcore.MicroTCWith(c.TensorCore, c.GPU.SMCount,
				c.SM.SubPartitions, c.GPU.ClockMHz, p, m, opt)
			if err != nil {
				return nil, err
			}
			out.Results = append(out.Results, r)
		}
	}
	return out, nil
}

func writeMicroTCTable(w io.Writer, out *microTCOutput) {
	fmt.Fprintf(w, "%s, %s; TFLOPS (TOPS for int8) are dense-equivalent\n", out.Tool, out.Config)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "precision\tmode\tTFLOPS\tFMA/clk/SM\tlatency (cycles)\tfidelity\t")
	for _, r := range out.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%s\t\n", r.Precision, r.Mode,
			r.TFLOPS, r.FMAPerClkPerSM, r.LatencyCycles, r.Fidelity)
	}
	tw.Flush()
}
