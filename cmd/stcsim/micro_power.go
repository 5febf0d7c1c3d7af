package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/sim"
)

func init() {
	registerMicro(&command{name: "power", summary: "board power of a " +
		"tensor-core-bound kernel (dense, sparse), a DRAM stream and the " +
		"idle board, against published measurements", run: runMicroPower})
}

// publishedPower is a measured board power of one microbenchmark kernel
// on the hardware of one config at one clock.
type publishedPower struct {
	Kernel   string  `json:"kernel"`
	Config   string  `json:"config"`
	ClockMHz int     `json:"clock_mhz"`
	Watts    float64 `json:"watts"`
	Source   string  `json:"source"`
}

// publishedPowers are the board-power measurements the command compares
// against (docs/validation.md, "Power and clock").
var publishedPowers = []publishedPower{
	{"tc-dense-fp16-const", "a100-pcie-40gb", 1410, 173.4, "Luo et al., IPDPS 2024 " +
		"(arXiv 2402.13499): fp16 mma throughput loop, 1.79 TFLOPS/W at 173.4 W, A100 PCIe; " +
		"its operand registers do not change between MMAs (values not stated), so the " +
		"multipliers' inputs do not toggle: compared with the -const row (data activity 0)"},
	{"idle", "a100-pcie-40gb", 1410, 59.3, "nvidia-smi, Tesla A100-PCIe-40GB " +
		"idle in P0 at 1410 MHz, 37 C, median of 56.4-60.9 W " +
		"(JimZeyuYang/GPU_Power_Benchmark, Transient_Response/A100_TR); the " +
		"config's board static power is set from it"},
	{"idle", "a100-80gb", 1155, 68.37, "nvidia-smi -q, A100-SXM4-80GB at " +
		"1155 MHz, one process resident, load not stated (public dump)"},
	{"dram-stream", "a100-40gb", 1410, 229.5, "RRZE-HPC gpu-benches " +
		"gpu-roofline/alex_a100_40.txt, its 0 lines: eight A100-SXM4-40GB boards reading " +
		"two float arrays at 1372 GB/s (one subtraction per pair) at 1410 MHz, the most " +
		"NVML power of 21 samples over 2.1 s, 224-239 W, median 229.5 W; held out"},
	{"dram-stream", "a40", 1740, 206.5, "RRZE-HPC gpu-benches " +
		"gpu-roofline/alex_a40.txt, its 0 lines: eight A40 boards (GA102) reading two " +
		"float arrays at 679 GB/s at 1740 MHz, the most NVML power of 21 samples over " +
		"2.1 s, 204-211 W, median 206.5 W; held out"},
}

// microPowerOutput is the JSON document of stcsim micro power.
type microPowerOutput struct {
	Tool       string           `json:"tool"`
	Provenance *sim.Provenance  `json:"provenance"`
	Config     string           `json:"config"`
	Sources    []string         `json:"sources"`
	LimitW     float64          `json:"limit_w"`
	Results    []sim.PowerPoint `json:"results"`
	Published  []publishedPower `json:"published"`
}

func runMicroPower(args []string) int {
	ld, format, code := microFlags("power", args)
	if ld == nil {
		return code
	}
	c := ld.Config
	res, err := sim.MicroPower(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro power:", flagged(err))
		return exitInternal
	}
	// The same tensor-core kernels with operands that never change, as a
	// throughput microbenchmark's registers do: data activity 0.
	still := *c
	still.Power.DataActivity = 0
	constRes, err := sim.MicroPower(&still)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro power:", flagged(err))
		return exitInternal
	}
	for i, r := range constRes {
		if strings.HasPrefix(r.Kernel, "tc-") {
			r.Kernel += "-const"
			res = slices.Insert(res, i*2+1, r)
		}
	}
	out := &microPowerOutput{Tool: "stcsim " + sim.Version, Config: c.Name,
		Sources: ld.Sources, Provenance: sim.ConfigProvenance(ld, os.Args), LimitW: c.Power.LimitW, Results: res}
	for _, p := range publishedPowers {
		if p.Config == c.Name && p.ClockMHz == c.GPU.ClockMHz {
			out.Published = append(out.Published, p)
		}
	}
	if format == "json" {
		return printMicroJSON("power", out)
	}
	writeMicroPowerTable(os.Stdout, out)
	return exitOK
}

func writeMicroPowerTable(w io.Writer, out *microPowerOutput) {
	fmt.Fprintf(w, "%s, %s: board power (limit %.0f W)\n", out.Tool,
		out.Config, out.LimitW)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tMHz\tW\tmeasured W\terror\tcapped MHz\tcapped W\t")
	for _, r := range out.Results {
		meas, errs := "", ""
		for _, p := range out.Published {
			if p.Kernel == r.Kernel {
				meas = fmt.Sprintf("%.1f", p.Watts)
				errs = fmt.Sprintf("%+.1f%%", 100*(r.PowerW-p.Watts)/p.Watts)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%d\t%.1f\t\n", r.Kernel,
			r.ClockMHz, r.PowerW, meas, errs, r.CappedMHz, r.CappedW)
	}
	tw.Flush()
	for _, p := range out.Published {
		fmt.Fprintf(w, "measured %s: %s\n", p.Kernel, p.Source)
	}
}
