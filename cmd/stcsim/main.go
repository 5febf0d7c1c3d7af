package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/tebeka/atexit"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/bug"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/sim"
)

// Exit statuses (the command's contract).
const (
	exitOK       = 0
	exitInternal = 1
	exitUsage    = 2
	// exitPanic is a bug that reached the command's edge as a panic.
	exitPanic = 3
)

// issuesURL is where a panic's report asks the user to file it.
const issuesURL = "https://github.com/stcsim/stcsim/issues"

// command is one subcommand; each lives in its own file and registers
// itself from init.
type command struct {
	name    string
	summary string
	run     func(args []string) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() {
	atexit.Exit(guarded(os.Args[1:]))
}

// guarded runs a command and turns a panic of its goroutine (or a worker's, re-raised here by
// internal/bug), which is a
// bug whatever the input, into exit 3 with a one-line report (the
// panic's value, bounded, and where it was raised) and a pointer to file
// an issue, instead of a stack dump. It is a backstop: bad input is
// refused with exit 2 before it can panic (TestHostileInputNeverPanics).
func guarded(args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(*bug.Panic) // a worker's, re-raised here (internal/bug)
			if !ok {
				p = &bug.Panic{Value: r, Site: bug.Site(3)}
			}
			fmt.Fprintf(os.Stderr, "stcsim: internal error (a bug, not your input): panic %s at %s; "+
				"please file an issue at %s with the command and its input files\n",
				quote.Q(fmt.Sprint(p.Value)), p.Site, issuesURL)
			code = exitPanic
		}
	}()
	return dispatch(args)
}

func dispatch(args []string) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Println("stcsim", sim.Version)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		// The names only: the summaries are `stcsim -h`'s.
		fmt.Fprintf(os.Stderr, "stcsim: unknown command %s; the commands are %s "+
			"(run 'stcsim -h' for what each does)\n", configs.Quote(args[0]),
			strings.Join(commandNames(), ", "))
		return exitUsage
	}
	return c.run(args[1:])
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: stcsim COMMAND [flags]\n\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'stcsim COMMAND -h' for a command's flags.")
}

// isHelp reports whether arg asks for usage.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// usageExit is the exit status after a command with subcommands printed
// its usage: 0 when args asked for it, 2 when they were wrong.
func usageExit(args []string) int {
	if len(args) > 0 && isHelp(args[0]) {
		return exitOK
	}
	return exitUsage
}

// subcommandUsage prints a command's usage when its subcommand (args[0])
// is missing or unknown, saying which, and returns the exit status.
func subcommandUsage(cmd string, args []string, usage string) int {
	if len(args) > 0 && !isHelp(args[0]) {
		fmt.Fprintf(os.Stderr, "stcsim %s: unknown subcommand %s\n", cmd, configs.Quote(args[0]))
	} else if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "stcsim %s: a subcommand is required\n", cmd)
	}
	fmt.Fprintln(os.Stderr, usage)
	return usageExit(args)
}
