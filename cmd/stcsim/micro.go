package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// microCommands are the microbenchmarks under "stcsim micro"; each lives in
// its own file and registers itself from init.
var microCommands = map[string]*command{}

func registerMicro(c *command) { microCommands[c.name] = c }

func init() {
	register(&command{name: "micro", summary: "microbenchmarks of the " +
		"tensor cores (tc) and the memory hierarchy (mem)", run: runMicro})
}

func runMicro(args []string) int {
	names := make([]string, 0, len(microCommands))
	for n := range microCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || microCommands[args[0]] == nil {
		fmt.Fprintf(os.Stderr, "usage: stcsim micro %s [flags]\n",
			strings.Join(names, "|"))
		return exitUsage
	}
	return microCommands[args[0]].run(args[1:])
}
