package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/testfiles"
	"github.com/stcsim/stcsim/sweep"
	"github.com/stcsim/stcsim/validation"
	"github.com/stcsim/stcsim/workloads"
)

// libraryFields is every option field a library package outside cmd/ can
// name in an error: its constants of type field.Name and its
// field.Name("...") conversions, read from the sources.
func libraryFields(t *testing.T) map[field.Name]string {
	t.Helper()
	out := map[field.Name]string{}
	fset := token.NewFileSet()
	isName := func(e ast.Expr) bool { // field.Name
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == "field" && sel.Sel.Name == "Name"
	}
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			out[field.Name(s)] = fset.Position(lit.Pos()).String()
		}
	}
	for _, src := range testfiles.LibrarySources(t, fset, "../..", func(string) bool { return false }) {
		ast.Inspect(src.File, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if isName(n.Type) {
					for _, v := range n.Values {
						add(v)
					}
				}
			case *ast.CallExpr:
				if isName(n.Fun) && len(n.Args) == 1 {
					add(n.Args[0])
				}
			}
			return true
		})
	}
	return out
}

// TestEveryLibraryFieldHasAFlag: every field the library's errors can
// name has its flag in the command's table, and the table names no field
// the library does not have.
func TestEveryLibraryFieldHasAFlag(t *testing.T) {
	lib := libraryFields(t)
	if len(lib) < 10 {
		t.Fatalf("found %d fields in the library's sources: the scan is broken", len(lib))
	}
	for n, at := range lib {
		if !strings.HasPrefix(flags[n], "--") {
			t.Errorf("field %q (%s) has no flag in cmd/stcsim/fields.go", n, at)
		}
	}
	for n := range flags {
		if _, ok := lib[n]; !ok {
			t.Errorf("fields.go spells field %q, which no library package declares", n)
		}
	}
}

// TestFlaggedSpellsFieldsAsFlags: a library error keeps its field names
// for a Go caller and reads with the command's flags once flagged, in
// place and through wrapping, and flagged keeps the chain for errors.As.
func TestFlaggedSpellsFieldsAsFlags(t *testing.T) {
	_, err := validation.Select(nil, "(", nil)
	wrapped := fmt.Errorf("validate: %w", err)
	if got, want := wrapped.Error(), `validate: rows "(": not a regular expression`; got != want {
		t.Errorf("library error %q, want %q", got, want)
	}
	if got, want := flagged(wrapped).Error(), `validate: --rows "(": not a regular expression`; got != want {
		t.Errorf("flagged %q, want %q", got, want)
	}
	var fe *field.Error
	if !errors.As(flagged(wrapped), &fe) || fe.Field != validation.FieldRows {
		t.Errorf("flagged error lost its field.Error: %v", fe)
	}
	_, err = sweep.ParseShard("0/2")
	if got := flagged(err).Error(); !strings.HasPrefix(got, `--shard "0/2": want i/n`) {
		t.Errorf("flagged shard error %q", got)
	}
	once := flagged(fmt.Errorf("run: %w", workloads.Training{Pass: "pass"}.Check()))
	if got, want := once.Error(), `run: --pass "pass": want forward, backward, step`; got != want {
		t.Errorf("flagged %q, want %q", got, want)
	}
	if twice := flagged(fmt.Errorf("stcsim: %w", once)); twice.Error() != "stcsim: "+once.Error() {
		t.Errorf("flagged twice: %q", twice)
	}
	plain := errors.New("no field here")
	if flagged(plain) != plain {
		t.Error("flagged changed an error that names no field")
	}
}
