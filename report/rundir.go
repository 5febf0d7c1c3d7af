package report

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/atomicfile"
	"github.com/stcsim/stcsim/results"
)

// ManifestName is the file in --out that lists, one name a line, the
// files the run there wrote. The next run into the directory removes
// exactly those (and writes its own list); any other file is left alone,
// and a file of the name a run writes that no manifest lists (a user's
// own, or one of a run older than the manifest) makes the run refuse the
// directory instead of overwriting it.
const ManifestName = ".stcsim-manifest"

const manifestHeader = "# stcsim: the files the run in this directory wrote; " +
	"the next run here replaces exactly these\n"

// fixedOutputs are the files of every run, results last.
var fixedOutputs = []string{"config.yaml", "report.md", "results.json", "results.csv"}

// RunFiles are the names of the files WriteRun may write into --out for
// a run of these workloads (in the order the results will list them): a
// superset, as a plot with nothing to show is not drawn.
func RunFiles(workloads []string) []string {
	rep := &results.Report{}
	for _, w := range workloads {
		rep.Results = append(rep.Results, results.LayerResult{Workload: w})
	}
	stems := plotStems(rep)
	names := slices.Clone(fixedOutputs)
	for _, w := range workloadsOf(rep) {
		for _, k := range workloadPlots {
			for _, f := range plotFormats {
				names = append(names, stems[w]+"-"+k.suffix+"."+f)
			}
		}
	}
	return names
}

// FieldOutDir is the run directory (CheckRunDir's and the writers'
// dir), as errors name it (package field).
const FieldOutDir field.Name = "out_dir"

// outDirError is err, a problem with the run directory dir.
func outDirError(dir string, err error) error {
	return &field.Error{Field: FieldOutDir, Value: dir, Err: err}
}

// CheckRunDir checks, before a run, that WriteRun can put files of these
// names into dir (see RunFiles) without overwriting anything an earlier
// stcsim run did not write there: no directory, link or unlisted file
// in their place. It returns the paths of the existing files the run
// would replace or remove, so that a caller can refuse to destroy an
// input.
func CheckRunDir(dir string, names []string) ([]string, error) {
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, outDirError(dir, err)
	}
	if !st.IsDir() {
		return nil, outDirError(dir, errors.New("exists and is not a directory"))
	}
	listed, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := checkConflicts(dir, names, listed); err != nil {
		return nil, err
	}
	var touched []string
	seen := map[string]bool{}
	for _, n := range append(append([]string{ManifestName}, names...), sortedKeys(listed)...) {
		p := filepath.Join(dir, n)
		if seen[n] {
			continue
		}
		seen[n] = true
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			touched = append(touched, p)
		}
	}
	return touched, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// readManifest reads the names dir's manifest lists: nil without one.
func readManifest(dir string) (map[string]bool, error) {
	p := filepath.Join(dir, ManifestName)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, outDirError(dir, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, outDirError(dir, field.Errorf("%s is not a regular file; remove it "+
			"or choose another %s", p, FieldOutDir))
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, outDirError(dir, err)
	}
	listed := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !validOutputName(line) {
			return nil, outDirError(dir, field.Errorf("%s:%d: %q is not a file name "+
				"stcsim writes; the manifest is damaged: remove it (and the "+
				"earlier run's files) or choose another %s", p, i+1, line, FieldOutDir))
		}
		listed[line] = true
	}
	return listed, nil
}

// validOutputName says whether a manifest line can name a file of --out.
func validOutputName(n string) bool {
	return n != "." && n != ".." && n != ManifestName &&
		!strings.ContainsAny(n, "/\\\x00") && filepath.Base(n) == n
}

func manifestText(names []string) []byte {
	var b strings.Builder
	b.WriteString(manifestHeader)
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return []byte(b.String())
}

// checkConflicts refuses names whose place in dir holds something no
// earlier run's manifest lists, a directory or a link.
func checkConflicts(dir string, names []string, listed map[string]bool) error {
	for _, n := range append([]string{ManifestName}, names...) {
		p := filepath.Join(dir, n)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return outDirError(dir, err)
		}
		switch {
		case fi.IsDir():
			return outDirError(dir, field.Errorf("%s is a directory, where the run "+
				"writes a file; remove it or choose another %s", p, FieldOutDir))
		case !fi.Mode().IsRegular():
			return outDirError(dir, field.Errorf("%s is not a regular file, where the "+
				"run writes one; remove it or choose another %s", p, FieldOutDir))
		case n == ManifestName || listed[n]:
		case listed == nil:
			return outDirError(dir, field.Errorf("%s exists, and no stcsim manifest (%s) "+
				"says a run wrote it (a file of yours, or of a run by an stcsim "+
				"older than the manifest); stcsim overwrites only files it "+
				"wrote: move it away or choose another %s", p, ManifestName, FieldOutDir))
		default:
			return outDirError(dir, field.Errorf("%s exists and is not one of the files "+
				"the earlier run listed in %s; stcsim overwrites only files it "+
				"wrote: move it away or choose another %s", p, ManifestName, FieldOutDir))
		}
	}
	return nil
}

// writeDir writes a run's files into dir so that no reader ever sees new
// files mixed with an earlier run's results: fill writes everything into
// a fresh temporary directory beside dir, and a manifest listing them is
// added; a new dir is then that directory renamed. Into an existing dir,
// the files the earlier run's manifest lists are moved aside (results
// first, whose presence marks a complete run), the new files moved in
// (results, then the manifest, last) and the earlier files removed; a
// failure on the way moves everything back. Other files in dir are left
// alone, and a file in the way that no manifest lists is an error before
// anything is touched. Temporary directories of interrupted runs are
// removed.
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
	fresh, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	names := make([]string, len(fresh))
	for i, e := range fresh {
		names[i] = e.Name()
	}
	names = resultsLast(names)
	if err := WriteAtomic(filepath.Join(tmp, ManifestName), manifestText(names)); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		return syncDir(parent)
	}
	return replaceOutputs(dir, tmp, names)
}

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

// staleTemp matches WriteAtomic's temporary file of name, left by a kill.
func staleTemp(tempName, name string) bool {
	rest, ok := strings.CutPrefix(tempName, atomicfile.TempName(name))
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 64)
	return err == nil
}

// rename is os.Rename; tests make it fail to check the rollback.
var rename = os.Rename

// replaceOutputs puts the files of tmp (names, then its manifest) into
// the existing dir in place of the files dir's manifest lists, all or
// nothing.
func replaceOutputs(dir, tmp string, names []string) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return outDirError(dir, errors.New("not a directory"))
	}
	listed, err := readManifest(dir)
	if err != nil {
		return err
	}
	if err := checkConflicts(dir, names, listed); err != nil {
		return err
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	// The earlier files go aside here; its name is one cleanStale
	// removes once this process is gone.
	aside, err := os.MkdirTemp(parent, fmt.Sprintf(".%s.tmp-%d-old-", base, os.Getpid()))
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	var old []string
	for _, n := range sortedKeys(listed) {
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			old = append(old, n)
		}
	}
	old = resultsLast(old)
	slices.Reverse(old) // results first
	type move struct{ from, to string }
	var done []move
	mv := func(from, to string) error {
		if err := rename(from, to); err != nil {
			return err
		}
		done = append(done, move{from, to})
		return nil
	}
	manifest := filepath.Join(dir, ManifestName)
	hadManifest := listed != nil
	err = func() error {
		if hadManifest {
			// A copy of the earlier manifest goes aside for a rollback; the
			// manifest itself is only ever replaced by a rename, so that
			// no moment leaves dir's files unlisted (a kill there left a
			// directory the next run refused).
			text, err := os.ReadFile(manifest)
			if err == nil {
				err = WriteAtomic(filepath.Join(aside, ManifestName), text)
			}
			if err != nil {
				return fmt.Errorf("replace earlier output: %w", err)
			}
		}
		// While files move, the manifest lists both runs' files, so that
		// a kill leaves a directory the next run can clean up.
		union := sortedKeys(listed)
		for _, n := range names {
			if !listed[n] {
				union = append(union, n)
			}
		}
		if err := WriteAtomic(manifest, manifestText(union)); err != nil {
			return err
		}
		for _, n := range old {
			if err := mv(filepath.Join(dir, n), filepath.Join(aside, n)); err != nil {
				return fmt.Errorf("remove earlier output: %w", err)
			}
		}
		for _, n := range names {
			if err := mv(filepath.Join(tmp, n), filepath.Join(dir, n)); err != nil {
				return fmt.Errorf("write %s: %w", filepath.Join(dir, n), err)
			}
		}
		if err := syncDir(dir); err != nil {
			return err
		}
		// The new manifest replaces the union in one rename, last.
		if err := rename(filepath.Join(tmp, ManifestName), manifest); err != nil {
			return fmt.Errorf("write %s: %w", manifest, err)
		}
		syncDir(dir) // the run is in place; a failed sync changes nothing of it
		return nil
	}()
	if err != nil {
		var undo error
		for i := len(done) - 1; i >= 0; i-- {
			if rerr := rename(done[i].to, done[i].from); rerr != nil && undo == nil {
				undo = rerr
			}
		}
		// The union written above lists every file until the earlier
		// manifest replaces it (or, when there was none, it goes).
		var rerr error
		if hadManifest {
			rerr = rename(filepath.Join(aside, ManifestName), manifest)
		} else if rerr = os.Remove(manifest); os.IsNotExist(rerr) {
			rerr = nil
		}
		if rerr != nil && undo == nil {
			undo = rerr
		}
		if undo != nil {
			kept := filepath.Join(parent, fmt.Sprintf(".%s.earlier-run-%d", base, os.Getpid()))
			if os.Rename(aside, kept) != nil {
				kept = aside
			}
			return fmt.Errorf("%w; putting the earlier run back failed too (%v): "+
				"its files are in %s", err, undo, kept)
		}
		os.RemoveAll(aside)
		return err
	}
	os.RemoveAll(aside)
	ours := append(append(sortedKeys(listed), names...), ManifestName)
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			for _, n := range ours {
				if !e.IsDir() && staleTemp(e.Name(), n) {
					os.Remove(filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	return nil
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
func CheckFinite(rep *results.Report) error {
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
