package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/stcsim/stcsim/configs"
)

// microCommands are the microbenchmarks under "stcsim micro"; each lives in
// its own file and registers itself from init.
var microCommands = map[string]*command{}

func registerMicro(c *command) { microCommands[c.name] = c }

func init() {
	register(&command{name: "micro", summary: "microbenchmarks of the " +
		"tensor cores (tc), memory (mem), board power (power), area (area)", run: runMicro})
}

func runMicro(args []string) int {
	names := make([]string, 0, len(microCommands))
	for n := range microCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || microCommands[args[0]] == nil {
		return subcommandUsage("micro", args, fmt.Sprintf("usage: stcsim micro %s [flags]",
			strings.Join(names, "|")))
	}
	return microCommands[args[0]].run(args[1:])
}

// microFlags parses the flags every microbenchmark shares (configs, sets,
// --format table|json) and loads the config; ld is nil when the command
// must stop with code.
func microFlags(name string, args []string) (ld *configs.Loaded, format string, code int) {
	fs := newFlagSet("micro "+name, "[--config NAME|PATH]... "+
		"[--set key=value]... [--format table|json]")
	var cf configFlags
	cf.add(fs)
	f := fs.String("format", "table", "table or json")
	if code, ok := parseFlags(fs, args); !ok {
		return nil, "", code
	}
	if *f != "table" && *f != "json" {
		fmt.Fprintf(os.Stderr, "stcsim micro %s: --format: unknown "+
			"format %s (want table or json)\n", name, configs.Quote(*f))
		return nil, "", exitUsage
	}
	ld, code = cf.load()
	return ld, *f, code
}

// printMicroJSON writes a microbenchmark's JSON document to stdout.
func printMicroJSON(name string, out any) int {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "stcsim micro %s: %v\n", name, flagged(err))
		return exitInternal
	}
	return exitOK
}
