package testfiles

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Source is one parsed Go file of the module, by its path from the root.
type Source struct {
	Rel  string
	File *ast.File
}

// LibrarySources parses the module's non-test Go files outside cmd/ (the
// library), in path order, for lint tests that read the code itself.
// root is the module's root, relative to the calling test's directory
// ("../.."); skip leaves out the directories (paths from the root, with
// slashes) it says yes to.
func LibrarySources(t testing.TB, fset *token.FileSet, root string, skip func(rel string) bool) []Source {
	t.Helper()
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []Source
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" ||
				rel == "cmd" || skip(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		out = append(out, Source{rel, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out
}
