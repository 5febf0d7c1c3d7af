package main

import (
	"fmt"
	"os"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
)

func init() {
	register(&command{name: "config", summary: "show the effective config, " +
		"or list the built-in ones", run: runConfig})
}

// listConfigs prints each built-in config's name and description, the
// descriptions aligned after the longest name.
func listConfigs() int {
	names := configs.Builtin()
	desc := make([]string, len(names))
	width := 0
	for i, n := range names {
		ld, err := configs.Load([]string{n}, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "stcsim: built-in %s: %v\n", n, flagged(err))
			return exitInternal
		}
		desc[i] = ld.Config.Description
		width = max(width, len(n))
	}
	for i, n := range names {
		fmt.Printf("%-*s  %s\n", width, n, desc[i])
	}
	return exitOK
}

func runConfig(args []string) int {
	if len(args) == 0 || (args[0] != "show" && args[0] != "list") {
		return subcommandUsage("config", args, "usage: stcsim config show [--config NAME|PATH]... [--set key=value]...\n"+
			"       stcsim config list")
	}
	if args[0] == "list" {
		if len(args) > 1 {
			fmt.Fprintf(os.Stderr, "stcsim config list: takes no arguments (got %s)\n", configs.Quote(args[1]))
			return exitUsage
		}
		return listConfigs()
	}
	fs := newFlagSet("config show", "[--config NAME|PATH]... [--set key=value]...")
	var cf configFlags
	cf.add(fs)
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	ld, code := cf.load()
	if ld == nil {
		return code
	}
	out, err := ld.AnnotatedYAML()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim config show:", flagged(err))
		return exitInternal
	}
	os.Stdout.Write(out)
	fmt.Println()
	if ld.Config.Sim.Fidelity == configs.FidelityFast {
		fmt.Printf("# sim.fidelity: fast: every kernel is timed by the analytical tier (sim/fast), "+
			"%s; a GEMM it refuses is timed at instruction level\n\n", sim.FastTierError())
	}
	if err := writeDatapaths(os.Stdout, ld, "# "); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim config show:", flagged(err))
		return exitInternal
	}
	if err := writeAreaSummary(os.Stdout, ld, "# "); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim config show:", flagged(err))
		return exitInternal
	}
	return exitOK
}
