package lint

import (
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"testing"

	"github.com/stcsim/stcsim/internal/testfiles"
)

// flagLike is a command-line flag in a message: two dashes and a letter,
// not inside a word ("--input", not "a--b").
var flagLike = regexp.MustCompile(`(^|[^A-Za-z0-9-])--[a-z]`)

// errorMakers are the calls whose string arguments become an error's
// message.
var errorMakers = map[string]bool{"fmt.Errorf": true, "errors.New": true, "field.Errorf": true}

// flagExempt are the library packages whose errors may name a flag, and why.
var flagExempt = map[string]string{
	// The config loader's origins are its API: an override is given to
	// it as the text "--set KEY=VALUE" (configs.Load's sets), and every
	// origin it reports, in errors and provenance alike, names it so.
	"configs": "an override's origin is its --set text",
}

// TestLibraryErrorsNameNoFlag: an error made outside cmd/ names the
// option at fault by its field (package field), never by a command's
// flag: a Go caller has no flags, and the command spells each field as
// its own flag (cmd/stcsim/fields.go).
func TestLibraryErrorsNameNoFlag(t *testing.T) {
	fset := token.NewFileSet()
	found := 0
	for _, src := range testfiles.LibrarySources(t, fset, "../..", func(rel string) bool { return flagExempt[rel] != "" }) {
		ast.Inspect(src.File, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !errorMakers[callee(call)] {
				return true
			}
			found++
			for _, a := range call.Args {
				ast.Inspect(a, func(n ast.Node) bool {
					lit, ok := n.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return true
					}
					if s, err := strconv.Unquote(lit.Value); err == nil && flagLike.MatchString(s) {
						t.Errorf("%s: %s names a flag in an error; name the field (package field)",
							fset.Position(lit.Pos()), lit.Value)
					}
					return true
				})
			}
			return true
		})
	}
	if found < 100 {
		t.Fatalf("found %d error calls outside cmd/: the scan is broken", found)
	}
}

// callee is a call's function as pkg.Name ("" for any other form).
func callee(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return id.Name + "." + sel.Sel.Name
}
