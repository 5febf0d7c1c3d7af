package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const mod = "github.com/stcsim/stcsim/"

// deps is every package of the module with its transitive imports, from
// the import declarations of its non-test files (read here, so that a
// change to any of them reruns this test rather than reusing a cached
// pass).
func deps(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	direct := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := strings.TrimSuffix(mod+filepath.ToSlash(rel), "/.")
		if direct[pkg] == nil {
			direct[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			q, _ := strconv.Unquote(im.Path.Value)
			direct[pkg][q] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g := map[string][]string{}
	for p := range direct {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(q string) {
			for r := range direct[q] {
				if !seen[r] {
					seen[r] = true
					walk(r)
				}
			}
		}
		walk(p)
		for q := range seen {
			g[p] = append(g[p], q)
		}
	}
	return g
}

// TestNoEngineBelowTheSimulator: the output contract, the report layer,
// the sweep results store, the config loader and the descriptions of the
// datapath and the memory hierarchy import neither Akita nor any room of
// the simulator, so a report, a store or a config can be read without
// the engine.
func TestNoEngineBelowTheSimulator(t *testing.T) {
	g := deps(t)
	for _, p := range []string{"results", "report", "configs", "tensorcore", "memory/memcfg", "memory/smem", "energy", "area", "workloads", "sweep/store", "sweep/point"} {
		d, ok := g[mod+p]
		if !ok {
			t.Fatalf("package %s not in the module", p)
		}
		for _, q := range d {
			if strings.HasPrefix(q, "github.com/sarchlab/akita") || strings.HasPrefix(q, mod+"sim") ||
				q == mod+"tensorcore/unit" || q == mod+"memory" {
				t.Errorf("%s imports %s", p, q)
			}
		}
	}
}

// TestSimulatorRoomsOneWay: cmd -> sim -> sim/selection -> sim/fast ->
// sim/gpu -> sim/sm -> sim/demand -> sim/kernel -> sim/internal/isa; no
// room imports one above it.
func TestSimulatorRoomsOneWay(t *testing.T) {
	g := deps(t)
	rooms := []string{"sim", "sim/selection", "sim/fast", "sim/gpu", "sim/sm", "sim/demand", "sim/kernel", "sim/internal/isa"}
	for i, low := range rooms {
		d := g[mod+low]
		for _, high := range rooms[:i] {
			for _, q := range d {
				if q == mod+high {
					t.Errorf("%s imports %s, a room above it", low, high)
				}
			}
		}
	}
}

// TestSweepStoreBelowThePlanner: cmd -> sweep (planning and running) ->
// sweep/store (the results store, exports, plot queries) -> sweep/point
// (the identities both speak of), and sweep/point imports no package of
// the module. The store returns its figures' data as results' types and
// imports no drawing: neither report nor a plotting library.
func TestSweepStoreBelowThePlanner(t *testing.T) {
	g := deps(t)
	for _, low := range []string{"sweep/store", "sweep/point"} {
		for _, q := range g[mod+low] {
			if q == mod+"sweep" {
				t.Errorf("%s imports sweep, the planner above it", low)
			}
			if q == mod+"report" || strings.HasPrefix(q, "gonum.org/v1/plot") {
				t.Errorf("%s imports %s, a drawing package", low, q)
			}
		}
	}
	for _, q := range g[mod+"sweep/point"] {
		if strings.HasPrefix(q, mod) {
			t.Errorf("sweep/point imports %s", q)
		}
	}
}

// TestNoArrowBackUp: the config sections below the loader (tensorcore,
// memory/memcfg, energy, area) import neither the loader nor anything
// under it, and no package under internal/ imports the simulator, the
// loader or the command: internal/ holds leaves.
func TestNoArrowBackUp(t *testing.T) {
	g := deps(t)
	for _, p := range []string{"tensorcore", "memory/memcfg", "energy", "area"} {
		for _, q := range g[mod+p] {
			if q == mod+"configs" || strings.HasPrefix(q, mod+"configs/") {
				t.Errorf("%s imports %s, the loader above it", p, q)
			}
		}
	}
	for p, d := range g {
		if !strings.HasPrefix(p, mod+"internal/") {
			continue
		}
		for _, q := range d {
			if q == mod+"sim" || strings.HasPrefix(q, mod+"sim/") || q == mod+"configs" ||
				strings.HasPrefix(q, mod+"cmd/") {
				t.Errorf("%s imports %s: internal/ holds leaves", p, q)
			}
		}
	}
}

// TestFieldIsALeaf: package field, which every library package may
// import to name an option in an error, imports no package of the
// module, so that naming a field can never make a cycle.
func TestFieldIsALeaf(t *testing.T) {
	g := deps(t)
	if _, ok := g[mod+"field"]; !ok {
		t.Fatal("package field not in the module")
	}
	for _, q := range g[mod+"field"] {
		if strings.HasPrefix(q, mod) {
			t.Errorf("field imports %s", q)
		}
	}
}
