package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
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
		fmt.Fprintln(os.Stderr, "stcsim:", err)
		return nil, exitUsage
	}
	return ld, exitOK
}

// newFlagSet makes a flag set that reports errors instead of exiting.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("stcsim "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fs.SetOutput(os.Stderr)
		fmt.Fprintf(os.Stderr, "usage: stcsim %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args; ok is false when the caller should return code.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		// Parse has printed the usage already (fs.Usage).
		return exitOK, false
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", fs.Name(), err)
		fmt.Fprintf(os.Stderr, "run '%s -h' for usage\n", fs.Name())
		return exitUsage, false
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
