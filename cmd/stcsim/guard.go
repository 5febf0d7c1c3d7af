package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
)

// Checks of outputs and of the size of the work, made before anything is
// simulated so that a bad flag costs nothing and exits 2.

// defaultMaxWork is the default --max-work: a job estimated above it is
// refused (about 10 hours of one core; see sim.WarpStepsPerSecond).
const defaultMaxWork = 3e8

// warnWork is the estimated work above which a run warns that it will
// take a long time (about an hour of one core).
const warnWork = 3e7

func addMaxWork(fs *flag.FlagSet, v *float64) {
	fs.Float64Var(v, "max-work", defaultMaxWork, "refuse a job whose "+
		"estimated simulated work is above this many warp k-steps "+
		"(about 8000 per second of one core)")
}

// checkWork estimates a job's simulated work: above max it is an error,
// above warnWork a warning on standard error.
func checkWork(p *sim.Prepared, max float64, what string) error {
	if !(max > 0) || math.IsInf(max, 1) {
		return fmt.Errorf("--max-work %g: must be a finite number > 0", max)
	}
	return checkEstimate(p.Work(), max, what,
		"simulate fewer or smaller GEMMs (sim.extrapolate_waves: true shortens large ones)")
}

// checkEstimate refuses estimated work w above max, saying what to do
// (hint), and warns above warnWork.
func checkEstimate(w, max float64, what, hint string) error {
	if !(max > 0) || math.IsInf(max, 1) {
		return fmt.Errorf("--max-work %g: must be a finite number > 0", max)
	}
	if w > max {
		return fmt.Errorf("%s: estimated work %s is above --max-work %.3g; "+
			"%s, or raise --max-work to run it anyway",
			what, sim.DescribeWork(w), max, hint)
	}
	if w > warnWork {
		fmt.Fprintf(os.Stderr, "stcsim: warning: %s: estimated work %s\n",
			what, sim.DescribeWork(w))
	}
	return nil
}

// defaultMaxMemory is the default --max-memory in bytes: two thirds of
// the 24 GB development machine, so that a run refused by it would have
// pushed that machine into swap or out of memory.
const defaultMaxMemory = 16e9

func addMaxMemory(fs *flag.FlagSet, v *float64) {
	fs.Float64Var(v, "max-memory", defaultMaxMemory, "refuse a job whose "+
		"estimated peak heap is above this many bytes (sim.Prepared.Memory)")
}

// checkMemory refuses a job whose estimated peak heap is above max.
func checkMemory(p *sim.Prepared, max float64, what string) error {
	if !(max > 0) || math.IsInf(max, 1) {
		return fmt.Errorf("--max-memory %g: must be a finite number > 0", max)
	}
	if b := p.Memory(); b > max {
		return fmt.Errorf("%s: estimated peak memory %s is above --max-memory "+
			"%.3g bytes; shrink l2.size_kb or gpu.sm_count, use "+
			"sim.memory_granularity=fast, or raise --max-memory to run it anyway",
			what, sim.DescribeMemory(b), max)
	}
	return nil
}

// checkOutDir checks that dir can hold a run's output: it is a directory
// or does not exist yet, and the directory it is (or would be made) in is
// writable.
func checkOutDir(flagName, dir string) error {
	if lst, err := os.Lstat(dir); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("%s %s: is a symbolic link to nothing (%v); give a directory", flagName, dir,
				errors.Unwrap(err))
		}
	}
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s %s: exists and is not a directory", flagName, dir)
	case err == nil:
		if err := probeWritable(flagName, dir, dir); err != nil {
			return err
		}
		return probeWritable(flagName, dir, filepath.Dir(filepath.Clean(dir)))
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %v", flagName, dir, err)
	}
	return probeWritable(flagName, dir, nearestDir(dir))
}

// checkOutFile checks that a file can be written at path: not a
// directory, not a symbolic link (an output is written to a temporary
// file and renamed over path, which would replace the link, not write
// where it points: name the target instead), in a directory that exists
// and is writable.
func checkOutFile(flagName, path string) error {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %s: is a symbolic link; give the file it points to "+
			"(outputs are replaced whole, never written through a link)", flagName, path)
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s %s: is a directory", flagName, path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s %s: not writable: %v", flagName, path,
				errors.Unwrap(err))
		}
		f.Close()
	}
	parent := filepath.Dir(path)
	st, err := os.Stat(parent)
	if err != nil {
		return fmt.Errorf("%s %s: directory %s: %v", flagName, path, parent, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s %s: %s is not a directory", flagName, path, parent)
	}
	return probeWritable(flagName, path, parent)
}

// checkOutput checks a file output (checkOutFile) that must not be any
// of the command's inputs either (by os.SameFile: another spelling, a
// hard or symbolic link of it), which writing would destroy.
func checkOutput(flagName, path string, inputs ...string) error {
	if err := checkOutFile(flagName, path); err != nil {
		return err
	}
	return checkNotInputs(flagName, path, inputs...)
}

// checkNotInputs refuses an output path that is one of inputs.
func checkNotInputs(flagName, path string, inputs ...string) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil // a file yet to be made is no input
	}
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
			return fmt.Errorf("%s %s: is the input %s, which writing would destroy; "+
				"write elsewhere", flagName, path, in)
		}
	}
	return nil
}

// nearestDir is the closest existing ancestor of a path to be created.
func nearestDir(p string) string {
	d := filepath.Dir(filepath.Clean(p))
	for {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		next := filepath.Dir(d)
		if next == d {
			return d
		}
		d = next
	}
}

// probeWritable creates and removes a file in dir.
func probeWritable(flagName, target, dir string) error {
	f, err := os.CreateTemp(dir, ".stcsim-probe-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %v", flagName, target,
			dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Bounds of a --trace-db path. SQLite keeps a journal beside the file
// (NAME-journal, 8 bytes more) and refuses an absolute path of more than
// 512 bytes; the trace is written under a temporary name of up to 24
// bytes more (observe.NewTracer) and renamed at the end.
const (
	maxTraceName = 255 - len("-journal") - 24
	maxTracePath = 512 - len("-journal") - 24
)

// checkTracePath checks a --trace-db path before anything runs: Akita's
// SQLite writer panics on a file it cannot create, so the file is
// created here once (and removed) where it will be.
func checkTracePath(path string) error {
	if !strings.HasSuffix(path, ".sqlite3") {
		return fmt.Errorf("--trace-db %s: the file name must end in .sqlite3", configs.Quote(path))
	}
	if strings.ContainsAny(path, "?") || strings.HasPrefix(path, "file:") {
		return fmt.Errorf("--trace-db %s: the SQLite driver reads ? as the "+
			"start of options and file: as a URI; pick a name without them", configs.Quote(path))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("--trace-db %s: %v", configs.Quote(path), err)
	}
	if n := len(filepath.Base(abs)); n > maxTraceName {
		return fmt.Errorf("--trace-db %s: a file name of %d bytes is above the limit of %d "+
			"(the system's 255 less SQLite's journal suffix)", configs.Quote(path), n, maxTraceName)
	}
	if len(abs) > maxTracePath {
		return fmt.Errorf("--trace-db %s: a full path of %d bytes is above SQLite's limit of %d; "+
			"pick a shorter path", configs.Quote(path), len(abs), maxTracePath)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("--trace-db %s: file exists; remove it or pick another name", configs.Quote(path))
	}
	if err := checkOutFile("--trace-db", path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("--trace-db %s: cannot create it: %v", configs.Quote(path), errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(path)
}

// workMeter renders the work simulated since it was made, against the
// estimate est (warp k-steps, sim.Prepared.KSteps; 0: not known), for a
// progress bar's lines.
func workMeter(est float64) func() string {
	done := workDone()
	return func() string {
		if est > 0 {
			return fmt.Sprintf("simulated %.3g of about %.3g warp k-steps", done(), est)
		}
		return fmt.Sprintf("simulated %.3g warp k-steps", done())
	}
}

// workShare is the share of the estimated work (est warp k-steps)
// simulated since the call, for the progress bar's percentage and ETA;
// 0 where there is no estimate (the fast tier simulates no k-steps).
func workShare(est float64) func() float64 {
	done := workDone()
	return func() float64 {
		if est <= 0 {
			return 0
		}
		return done() / est
	}
}

// workDone counts the warp k-steps simulated since the call.
func workDone() func() float64 {
	start := sim.WarpStepsSimulated()
	return func() float64 { return float64(sim.WarpStepsSimulated() - start) }
}
