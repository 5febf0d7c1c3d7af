package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/importer"
)

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

// configFlags are the --config and --set flags shared by commands that
// load a GPU config.
type configFlags struct {
	configs multiFlag
	sets    multiFlag
}

func (c *configFlags) add(fs *flag.FlagSet) {
	fs.Var(&c.configs, "config", "GPU config: built-in name ("+
		strings.Join(configs.Builtin(), ", ")+") or YAML file; repeat "+
		"to overlay (default "+configs.Default+")")
	fs.Var(&c.sets, "set", "override one config value, key.path=value "+
		"(repeatable)")
}

// load loads the effective config; on failure it prints why and returns
// the usage exit status.
func (c *configFlags) load() (*configs.Loaded, int) {
	ld, err := configs.Load(c.configs, c.sets)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim:", flagged(err))
		return nil, exitUsage
	}
	return ld, exitOK
}

// newFlagSet makes a flag set that reports errors instead of exiting.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("stcsim "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error too; the usage is
	// printed only when asked for (-h), by flagFailure.
	fs.Usage = func() {}
	synopses[fs.Name()] = synopsis
	return fs
}

// synopses are the commands' synopses, by flag set name, for -h.
var synopses = map[string]string{}

// flagFailure reports a parse error of fs, the one path every command's
// flag errors take: -h prints the usage (exit 0); any other error is one
// line, every value in it quoted boundedly (flagMessage), and a pointer
// to -h (exit 2).
func flagFailure(fs *flag.FlagSet, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n\nflags:\n", fs.Name(), synopses[fs.Name()])
		fs.SetOutput(os.Stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", fs.Name(), flagMessage(err))
	fmt.Fprintf(os.Stderr, "run '%s -h' for usage\n", fs.Name())
	return exitUsage
}

// flagMessage rewrites the flag package's message, which quotes a value
// or a flag name whole (a 100 KB --max-work was printed back whole),
// with each quoted boundedly and control characters escaped.
func flagMessage(err error) string {
	msg := err.Error()
	for _, p := range []string{"invalid value ", "invalid boolean value "} {
		rest, ok := strings.CutPrefix(msg, p)
		if !ok {
			continue
		}
		if q, qerr := strconv.QuotedPrefix(rest); qerr == nil {
			v, _ := strconv.Unquote(q)
			return p + configs.Quote(v) + boundedTail(rest[len(q):])
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + configs.Quote(name)
	}
	if s, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return "bad flag syntax: " + configs.Quote(s)
	}
	return boundedTail(msg)
}

// boundedTail escapes control characters in the rest of a flag message
// (a Value's own Set error) and cuts it to 200 bytes.
func boundedTail(s string) string {
	q := strconv.Quote(s)
	q = q[1 : len(q)-1]
	if len(q) > 200 {
		q = q[:200] + "..."
	}
	return q
}

// parseFlags parses args; ok is false when the caller should return code.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		return flagFailure(fs, err), false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %s\n", fs.Name(), configs.Quote(fs.Arg(0)))
		return exitUsage, false
	}
	return exitOK, true
}

// checkUnreadFlags refuses a flag that shapes built-in workloads where
// none of a job's workloads reads it (a value that changes nothing would
// read as if it had): --seq is the BERT models', --resolution the
// ResNets', --per-layer the built-in models', --batch theirs and, where
// the command has it, --gemm's (gemms: the job has --gemm GEMMs). names
// are the job's workloads, a trace file's rows carrying their own shapes
// and batch; what names the job in the message ("run", "export").
func checkUnreadFlags(fs *flag.FlagSet, names []string, gemms bool, what string) error {
	var model, bert, resnet, onnx bool
	for _, n := range names {
		onnx = onnx || importer.Format(n, nil) == importer.FormatONNX
		if slices.Contains(workloads.Models(), n) {
			model = true
			bert = bert || workloads.Reads(n, "seq")
			resnet = resnet || workloads.Reads(n, "resolution")
		}
	}
	batchBy := "the built-in models do"
	if fs.Lookup("gemm") != nil {
		batchBy = "the built-in models and --gemm do"
	}
	readers := map[string]struct {
		read bool
		by   string
	}{
		"seq":        {bert, "the built-in BERT models do; a trace file's rows carry their own shapes"},
		"resolution": {resnet, "the built-in ResNet models do; a trace file's rows carry their own shapes"},
		"batch":      {model || gemms || onnx, batchBy + "; a trace file carries its own batch column"},
		"per-layer":  {model, "the built-in models do; a trace file's rows are exported as they are"},
		"input":      {onnx, "an ONNX graph does"},
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		r, ok := readers[fl.Name]
		if err != nil || !ok || r.read {
			return
		}
		given := "--" + fl.Name
		if b, isBool := fl.Value.(interface{ IsBoolFlag() bool }); !isBool || !b.IsBoolFlag() {
			given += " " + fl.Value.String()
		}
		err = fmt.Errorf("%s: no workload of this %s reads it (%s)", given, what, r.by)
	})
	return err
}
