package layers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// simTestForbidden are the rooms a test of package sim (the run driver)
// may not import: a test that needs one tests that room's code and
// belongs in it (as an internal test there), where the names it uses
// need not be exported. A test of sim goes through sim's own API (Job,
// Prepare, Run, the records).
var simTestForbidden = []string{"sim/selection", "sim/gpu", "sim/sm", "sim/internal/isa"}

// TestTestsInTheirRooms: no package under sim/ has tests of another
// room's code. An internal test of a room imports no simulator room its
// own code does not (directly or through another), and a test of package
// sim imports none of simTestForbidden. An external test package
// (package x_test) may: it holds a faster path against the detailed one
// above it (sim/fast's agreement tests).
func TestTestsInTheirRooms(t *testing.T) {
	g := deps(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, room := range []string{"sim", "sim/selection", "sim/fast", "sim/gpu", "sim/sm", "sim/kernel", "sim/internal/isa"} {
		files, err := filepath.Glob(filepath.Join(root, room, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			pkg, imports := testImports(t, f)
			if strings.HasSuffix(pkg, "_test") {
				continue
			}
			for _, q := range imports {
				if !strings.HasPrefix(q, mod+"sim") || q == mod+room {
					continue
				}
				rel := strings.TrimPrefix(q, mod)
				if !slices.Contains(g[mod+room], q) {
					t.Errorf("%s/%s imports %s, which %s's own code does not: it tests "+
						"another room's code; move it there", room, filepath.Base(f), rel, room)
				}
				if room != "sim" || !slices.Contains(simTestForbidden, rel) {
					continue
				}
				t.Errorf("sim/%s imports %s: a test of that room's code belongs in %s "+
					"(as an internal test there); sim's tests go through Prepare and Run",
					filepath.Base(f), rel, rel)
			}
		}
	}
}

// testImports are a test file's package name and imports.
func testImports(t *testing.T, path string) (string, []string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, im := range f.Imports {
		q, _ := strconv.Unquote(im.Path.Value)
		out = append(out, q)
	}
	return f.Name.Name, out
}
