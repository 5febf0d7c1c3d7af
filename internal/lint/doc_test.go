package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// satisfiers are method names whose meaning an interface of the standard
// library gives; they need no doc of their own.
var satisfiers = map[string]bool{"String": true, "Error": true, "Unwrap": true,
	"Len": true, "Less": true, "Swap": true, "Push": true, "Pop": true}

type decl struct {
	pos      token.Position
	name     string
	exported bool
	doc      *ast.CommentGroup
}

// packages maps each directory of non-test, non-generated Go files to its
// top-level functions, methods and types with their doc comments.
func packages(t *testing.T) map[string][]decl {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string][]decl{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "onnxpb") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		for _, dc := range f.Decls {
			out[dir] = append(out[dir], decls(fset, dc)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decls(fset *token.FileSet, d ast.Decl) []decl {
	switch d := d.(type) {
	case *ast.FuncDecl:
		exported := d.Name.IsExported() && receiverExported(d)
		if d.Recv != nil && satisfiers[d.Name.Name] {
			return nil
		}
		return []decl{{fset.Position(d.Pos()), d.Name.Name, exported, d.Doc}}
	case *ast.GenDecl:
		var out []decl
		for _, s := range d.Specs {
			ts, ok := s.(*ast.TypeSpec)
			if !ok {
				continue
			}
			doc := ts.Doc
			if doc == nil && (len(d.Specs) == 1 || d.Doc != nil) {
				doc = d.Doc // a group's doc covers its members
				if len(d.Specs) > 1 {
					continue
				}
			}
			out = append(out, decl{fset.Position(ts.Pos()), ts.Name.Name, ts.Name.IsExported(), doc})
		}
		return out
	}
	return nil
}

func receiverExported(d *ast.FuncDecl) bool {
	if d.Recv == nil {
		return true
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// firstName is the doc's first word, past an article.
func firstName(doc *ast.CommentGroup) string {
	w := strings.Fields(doc.Text())
	if len(w) > 1 && (w[0] == "A" || w[0] == "An" || w[0] == "The") {
		w = w[1:]
	}
	if len(w) == 0 {
		return ""
	}
	return strings.TrimRight(w[0], ":,.;")
}

// TestExportedNamesDocumented: every exported function, method of an
// exported type and type has a doc comment that begins with its name.
func TestExportedNamesDocumented(t *testing.T) {
	for _, ds := range packages(t) {
		for _, d := range ds {
			if !d.exported {
				continue
			}
			if d.doc == nil {
				t.Errorf("%s: exported %s has no doc comment", d.pos, d.name)
			} else if w := firstName(d.doc); w != d.name && !strings.HasPrefix(w, d.name) {
				t.Errorf("%s: the doc comment of %s begins %q", d.pos, d.name, w)
			}
		}
	}
}

// TestDocNamesItsOwnDecl: a doc comment that begins with the name of
// another declaration of its package (a function renamed or moved, its
// comment left behind) fails, exported or not.
func TestDocNamesItsOwnDecl(t *testing.T) {
	for _, ds := range packages(t) {
		names := map[string]bool{}
		for _, d := range ds {
			names[d.name] = true
		}
		for _, d := range ds {
			if d.doc == nil {
				continue
			}
			if w := firstName(d.doc); w != d.name && names[w] {
				t.Errorf("%s: the doc comment of %s names %s", d.pos, d.name, w)
			}
		}
	}
}
