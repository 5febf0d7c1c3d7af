package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/sweep/store"
)

func init() {
	register(&command{name: "merge", summary: "combine sweep results " +
		"stores (e.g. the shards of a sweep) into one", run: runMerge})
}

func runMerge(args []string) int {
	fs := newFlagSet("merge", "OUT.db IN.db [IN.db...]")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 2 {
		return usageError(fs, "want an output store and at least one input")
	}
	out, ins := pos[0], pos[1:]
	for i, in := range ins {
		if sameFile(out, in) {
			return usageError(fs, "input %s is the output store", quote.Path(in))
		}
		if _, err := os.Stat(in); err != nil {
			return usageError(fs, "input %s: %v", quote.Path(in), errors.Unwrap(err))
		}
		for _, prev := range ins[:i] {
			if sameFile(prev, in) { // another spelling, a symbolic or hard link
				return usageError(fs, "inputs %s and %s are the same store "+
					"(given twice)", prev, in)
			}
		}
	}
	if err := checkOutFile("output store", out); err != nil {
		return usageError(fs, "%v", err)
	}
	if err := store.CheckInputs(ins...); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim merge:", flagged(err))
		return storeExit(err)
	}
	st, err := store.Open(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim merge:", flagged(err))
		return storeExit(err)
	}
	err = st.Merge(ins...)
	if err == nil {
		err = st.Check()
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim merge:", flagged(err))
		return storeExit(err)
	}
	fmt.Fprintf(os.Stderr, "merged %d stores into %s\n", len(ins), out)
	return exitOK
}

// storeExit is the exit status of a store error: 2 for bad input (a
// file that is not a store, damaged or conflicting stores), 1 otherwise.
func storeExit(err error) int {
	var in *store.InputError
	if errors.As(err, &in) || errors.Is(err, store.ErrNotStore) {
		return exitUsage
	}
	return exitInternal
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
