package configs

// Shared checks of input files and values for the other readers of
// stcsim's inputs (traces, points files, sweep files), so that every
// input gets the rules of configs/input.go.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"
)

// ReadRegular reads the whole file at path, which must be a regular file
// of at most limit bytes, so that a device (/dev/zero), a FIFO or a
// directory named by mistake is refused before anything of it is read,
// and a huge file before it fills the memory. what names the kind of
// file in the size error ("a trace file"). Errors do not repeat the
// path: callers prefix it.
func ReadRegular(path string, limit int64, what string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, bare(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > limit {
		return nil, sizeError(st.Size(), limit, what)
	}
	// O_NONBLOCK: a FIFO put in the file's place after the Stat opens
	// at once (and is refused below) instead of waiting for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, bare(err)
	}
	defer f.Close()
	// The path may have been replaced between Stat and Open: check what
	// was opened, and never read more than limit+1 bytes of it.
	if fst, err := f.Stat(); err != nil {
		return nil, err
	} else if !fst.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("above the limit of %d bytes for %s", limit, what)
	}
	return data, nil
}

func sizeError(size, limit int64, what string) error {
	return fmt.Errorf("%d bytes, above the limit of %d (%s) for %s", size,
		limit, human(limit), what)
}

// human renders a byte count in MiB or KiB when it is a whole number of
// them.
func human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// bare drops the operation and path of a *fs.PathError (the caller names
// the file), keeping what errors.Is matches (fs.ErrNotExist).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckWholeNumber applies the rule of an integer config key to a YAML
// scalar read into an int outside a config (a sweep's batch:, seq:):
// decimal digits only, so that 1.9 is not read as 1 nor 1e1 as 10; the
// range is the caller's.
func CheckWholeNumber(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("want a whole number, got %s",
			map[yaml.Kind]string{yaml.MappingNode: "a mapping",
				yaml.SequenceNode: "a list", yaml.AliasNode: "an alias",
				yaml.DocumentNode: "a document"}[n.Kind])
	}
	var v int
	if !isDecimal(strings.TrimSpace(n.Value)) || n.Decode(&v) != nil {
		return 0, fmt.Errorf("want a whole number in decimal digits "+
			"(no fraction, exponent or leading zero), got %s", Quote(n.Value))
	}
	return v, nil
}
