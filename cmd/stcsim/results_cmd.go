package main

import (
	"fmt"
	"os"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/sweep/store"
)

func init() {
	register(&command{name: "results", summary: "export a sweep results " +
		"store as CSV or JSON", run: runResults})
}

func runResults(args []string) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(os.Stderr, "usage: stcsim results export DB "+
			"[--format csv|json] [--out FILE]")
		return usageExit(args)
	}
	fs := newFlagSet("results export", "DB [--format csv|json] [--out FILE]")
	format := fs.String("format", "csv", "csv or json")
	out := fs.String("out", "", "write to this file instead of standard output")
	pos, code, ok := parseArgs(fs, args[1:])
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, "want exactly one store, got %d arguments", len(pos))
	}
	if *format != "csv" && *format != "json" {
		return usageError(fs, "--format %s: want csv or json", configs.Quote(*format))
	}
	if *out != "" {
		if err := checkOutFile("--out", *out); err != nil {
			return usageError(fs, "%v", err)
		}
		if err := checkNotInput(*out, pos[0]); err != nil {
			return usageError(fs, "%v", err)
		}
	}
	rows, err := readRows(pos[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim results:", flagged(err))
		return exitUsage
	}
	data := store.ExportCSV(rows)
	if *format == "json" {
		data = store.ExportJSON(rows)
	}
	if *out != "" {
		if err := report.WriteAtomic(*out, data); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim results:", flagged(err))
			return exitInternal
		}
		return exitOK
	}
	if _, err := os.Stdout.Write(data); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim results:", flagged(err))
		return exitInternal
	}
	return exitOK
}

// readRows reads every result of an existing store, read-only (nothing
// is created beside it), after checking it (store.Store.Check). Closing
// the store is checked too: it fails when another process wrote the
// store while it was read.
func readRows(path string) ([]store.Row, error) {
	st, err := store.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	err = st.Check()
	var rows []store.Row
	if err == nil {
		rows, err = st.Rows()
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// checkNotInput refuses an --out FILE that is the input store (by
// os.SameFile: another spelling, a link), which writing would destroy.
func checkNotInput(out, in string) error {
	if _, err := os.Stat(out); err != nil {
		return nil // a new file is no input
	}
	if sameFile(out, in) {
		return fmt.Errorf("--out %s is the input store %s", out, in)
	}
	return nil
}
