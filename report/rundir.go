package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/stcsim/stcsim/sim"
)

// writeDir writes a run's files into dir so that no reader ever sees new
// files mixed with an earlier run's results: fill writes everything into
// a fresh temporary directory beside dir; a new dir is then that
// directory renamed. Into an existing dir, the earlier run's outputs are
// removed (results first, whose presence marks a complete run) and the
// new files moved in (results last); other files there are left alone.
// Temporary files and directories of interrupted runs are removed.
func writeDir(dir string, fill func(tmp string) error) error {
	dir = filepath.Clean(dir)
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	cleanStale(parent, "."+base+".tmp-")
	tmp, err := os.MkdirTemp(parent, fmt.Sprintf(".%s.tmp-%d-", base, os.Getpid()))
	if err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		return nil
	}
	return replaceOutputs(dir, tmp)
}

// isOutput says whether a file name is one stcsim writes into --out.
func isOutput(name string) bool {
	switch name {
	case "config.yaml", "report.md", "results.json", "results.csv":
		return true
	}
	if m := plotName.FindStringSubmatch(name); m != nil {
		return plotKinds[m[1]]
	}
	return staleAtomic.MatchString(name)
}

var (
	plotName    = regexp.MustCompile(`^.+-(speedup|breakdown-dense|breakdown-sparse|roofline)\.(png|svg)$`)
	staleAtomic = regexp.MustCompile(`^\..+\.tmp\d*$`) // WriteAtomic's, left by a kill
)

// resultsLast orders file names so that results.json and results.csv
// come last (and are removed first).
func resultsLast(names []string) []string {
	var out, res []string
	for _, n := range names {
		if strings.HasPrefix(n, "results.") {
			res = append(res, n)
		} else {
			out = append(out, n)
		}
	}
	return append(out, res...)
}

func replaceOutputs(dir, tmp string) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s: not a directory", dir)
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	var stale []string
	for _, e := range old {
		if !e.IsDir() && isOutput(e.Name()) {
			stale = append(stale, e.Name())
		}
	}
	stale = resultsLast(stale)
	for i := len(stale) - 1; i >= 0; i-- { // results first
		if err := os.Remove(filepath.Join(dir, stale[i])); err != nil {
			return fmt.Errorf("remove earlier output: %w", err)
		}
	}
	fresh, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	names := make([]string, len(fresh))
	for i, e := range fresh {
		names[i] = e.Name()
	}
	for _, n := range resultsLast(names) {
		if err := os.Rename(filepath.Join(tmp, n), filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(dir, n), err)
		}
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// cleanStale removes temporary directories beside the output whose
// writing process is gone.
func cleanStale(parent, prefix string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || processAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// CheckFinite reports a result that is not a finite number: a model
// failure, found before any output is written (JSON cannot hold it, and a
// plot or table of it would mislead).
func CheckFinite(rep *sim.Report) error {
	for _, r := range rep.Results {
		if f, ok := firstNonFinite(reflect.ValueOf(r), ""); !ok {
			return fmt.Errorf("internal error: workload %s layer %s mode %s: "+
				"%s is not a finite number", r.Workload, r.Layer, r.Mode, f)
		}
	}
	for _, t := range rep.Totals {
		if f, ok := firstNonFinite(reflect.ValueOf(t), ""); !ok {
			return fmt.Errorf("internal error: workload %s total %s: %s is "+
				"not a finite number", t.Workload, t.Mode, f)
		}
	}
	return nil
}

func firstNonFinite(v reflect.Value, path string) (string, bool) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			if f, ok := firstNonFinite(v.Field(i), path+name+"."); !ok {
				return f, false
			}
		}
	case reflect.Float32, reflect.Float64:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			return strings.TrimSuffix(path, "."), false
		}
	}
	return "", true
}
