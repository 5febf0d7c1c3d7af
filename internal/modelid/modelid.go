// Package modelid names the simulation model an executable runs: the key
// by which the simulation cache tells one model's records from another's.
// The name is the SHA-256 of the non-test Go source of the sim package and
// of every package of the module it imports (embedded at build time, see
// the root package stcsim), the Go toolchain and architecture it was
// compiled with, and the versions of the modules that source imports. It
// never depends on the executable's bytes, the build's VCS stamp or the
// workload, so every way of building one tree (`go run`, `go build`,
// `go install`, a test binary) gives the same name, and any change to a
// simulator file (one line, a comment included) gives another.
package modelid

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stcsim/stcsim"
)

// Module is the module path of stcsim.
const Module = "github.com/stcsim/stcsim"

// Root is the package whose records the cache keeps: the simulator is it
// and every package of the module it imports.
const Root = "sim"

var (
	once  sync.Once
	id    string
	idErr error
)

// ID is the running executable's model identity (hex SHA-256), computed
// once from the source embedded in it.
func ID() (string, error) {
	once.Do(func() {
		var deps []*debug.Module
		if bi, ok := debug.ReadBuildInfo(); ok {
			deps = bi.Deps
		}
		id, idErr = Of(stcsim.Source, deps, runtime.Version()+" "+runtime.GOARCH)
	})
	return id, idErr
}

// Of is the identity of the model whose source is src (a tree laid out as
// the module), built against deps by toolchain.
func Of(src fs.FS, deps []*debug.Module, toolchain string) (string, error) {
	files, external, err := Files(src)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "stcsim-model-v1\ntoolchain %s\n", toolchain)
	for _, m := range modules(external, deps) {
		fmt.Fprintf(h, "module %s\n", m)
	}
	for _, f := range files {
		data, err := fs.ReadFile(src, f)
		if err != nil {
			return "", fmt.Errorf("model identity: %w", err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "file %s %x\n", f, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Files are the simulator's source files in src (sorted paths: the
// non-test .go files of Root and of every module package it imports,
// transitively) and the import paths outside the module and the standard
// library that they name (sorted).
func Files(src fs.FS) (files, external []string, err error) {
	seen := map[string]bool{Root: true}
	ext := map[string]bool{}
	queue := []string{Root}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		names, imports, err := packageFiles(src, dir)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, names...)
		for _, im := range imports {
			switch {
			case strings.HasPrefix(im, Module+"/"):
				if d := strings.TrimPrefix(im, Module+"/"); !seen[d] {
					seen[d] = true
					queue = append(queue, d)
				}
			case im == Module:
				return nil, nil, fmt.Errorf("model identity: package %s imports the root package", dir)
			case strings.Contains(strings.SplitN(im, "/", 2)[0], "."):
				ext[im] = true
			}
		}
	}
	slices.Sort(files)
	for im := range ext {
		external = append(external, im)
	}
	slices.Sort(external)
	return files, external, nil
}

// packageFiles are the non-test .go files of the package in dir and what
// they import.
func packageFiles(src fs.FS, dir string) (files, imports []string, err error) {
	entries, err := fs.ReadDir(src, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("model identity: package %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		p := path.Join(dir, name)
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return nil, nil, fmt.Errorf("model identity: %w", err)
		}
		f, err := parser.ParseFile(fset, p, data, parser.ImportsOnly)
		if err != nil {
			return nil, nil, fmt.Errorf("model identity: %w", err)
		}
		files = append(files, p)
		for _, im := range f.Imports {
			q, _ := strconv.Unquote(im.Path.Value)
			imports = append(imports, q)
		}
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("model identity: package %s has no Go files in the embedded source", dir)
	}
	return files, imports, nil
}

// modules are the modules (path@version and sum, or the replacement) that
// provide the imports, from the build's dependency list; an import no
// module of the list provides is named as such.
func modules(imports []string, deps []*debug.Module) []string {
	set := map[string]bool{}
	for _, im := range imports {
		var best *debug.Module
		for _, d := range deps {
			if (im == d.Path || strings.HasPrefix(im, d.Path+"/")) && (best == nil || len(d.Path) > len(best.Path)) {
				best = d
			}
		}
		switch {
		case best == nil:
			set[im+" (no module in the build information)"] = true
		case best.Replace != nil:
			set[best.Path+" => "+best.Replace.Path+"@"+best.Replace.Version+" "+best.Replace.Sum] = true
		default:
			set[best.Path+"@"+best.Version+" "+best.Sum] = true
		}
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}
