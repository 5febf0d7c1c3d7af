package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim"
)

func init() {
	registerMicro(&command{name: "mem", summary: "memory-hierarchy " +
		"pointer-chase latency sweep and streaming bandwidth per level",
		run: runMicroMem})
}

// microMemOutput is the JSON document of stcsim micro mem.
type microMemOutput struct {
	Tool       string               `json:"tool"`
	Provenance *sim.Provenance      `json:"provenance"`
	Config     string               `json:"config"`
	Sources    []string             `json:"sources"`
	Results    []memory.MicroResult `json:"results"`
}

// microMem is the microbenchmark the command runs. The command's tests
// replace it to check what it is called with and what is printed, so
// that the full microbenchmark runs in memory's tests only.
var microMem = memory.MicroMem

func runMicroMem(args []string) int {
	ld, format, code := microFlags("mem", args)
	if ld == nil {
		return code
	}
	c := ld.Config
	res, err := microMem(c.Memory, clock.MHz(c.GPU.ClockMHz), c.GPU.SMCount,
		c.SM.CTALaunchLatency)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro mem:", flagged(err))
		return exitInternal
	}
	out := &microMemOutput{Tool: "stcsim " + sim.Version, Config: c.Name,
		Sources: ld.Sources, Provenance: sim.ConfigProvenance(ld, os.Args), Results: res}
	if format == "json" {
		return printMicroJSON("mem", out)
	}
	writeMicroMemTable(os.Stdout, out)
	return exitOK
}

func writeMicroMemTable(w io.Writer, out *microMemOutput) {
	fmt.Fprintf(w, "%s, %s: memory microbenchmarks (fast model)\n",
		out.Tool, out.Config)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tlevel\tworking set (KiB)\tvalue\tunit\t")
	for _, r := range out.Results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t\n", r.Kind, r.Level,
			r.WorkingSetBytes>>10, r.Value, r.Unit)
	}
	tw.Flush()
}
