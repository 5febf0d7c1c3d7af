package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatternHasOneOwner holds that tensorcore.Pattern owns its rules:
// no non-test file outside package tensorcore computes a pattern's kept
// fraction (x*N/M, x/M*N) or its inverse (M/N) by hand from a value's N
// and M fields, and none parses a config's sparse_pattern again (the
// precision config's Pattern() is the parse made when it loaded).
func TestPatternHasOneOwner(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Dir(filepath.ToSlash(rel)) == "tensorcore" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, p := range patternByHand(f) {
			bad = append(bad, fset.Position(p).String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: a pattern rule computed by hand; ask tensorcore.Pattern (Kept, Group, Ideal, ...) or PrecisionConfig.Pattern()", b)
	}
}

// TestPatternScanFinds holds the scan to the forms the tree had before
// Pattern owned its rules, and to arithmetic it must leave alone.
func TestPatternScanFinds(t *testing.T) {
	for _, tc := range []struct {
		expr string
		bad  bool
	}{
		{"t.BK * p.Pattern.N / p.Pattern.M", true},
		{"k / p.M * p.N", true},
		{"float64(p.Pattern.M) / float64(p.Pattern.N)", true},
		{"float64(g.M*p.PaddedK*p.Pattern.N/\np.Pattern.M*p.ElemBytes) + 1", true},
		{"mmas * uint64(sh.FMAs()*kept.N/kept.M)", true},
		{"tensorcore.ParsePattern(prec.SparsePattern)", true},
		{"2 * float64(p.M) * float64(p.N) * float64(p.K) / (v * 1e12)", false},
		{"p.Pattern.Kept(t.BK) / 2", false},
		{"a.N / b.M", false},
		{"(t.WarpM / p.Inst.M) * (t.WarpN / p.Inst.N)", false},
		{"tensorcore.ParsePattern(*flag)", false},
	} {
		src := "package x\nvar _ = " + tc.expr + "\n"
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := len(patternByHand(f)) > 0; got != tc.bad {
			t.Errorf("%s: found %v, want %v", tc.expr, got, tc.bad)
		}
	}
}

// patternByHand is where f computes a pattern rule by hand: a division
// whose divisor holds B.M (or B.N) inside one arithmetic expression that
// holds B.N (or B.M) outside every divisor, for one base expression B; or
// a ParsePattern of a SparsePattern field.
func patternByHand(f *ast.File) []token.Pos {
	var stack []ast.Node
	var out []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		if c, ok := n.(*ast.CallExpr); ok && parsesConfigPattern(c) {
			out = append(out, c.Pos())
		}
		q, ok := n.(*ast.BinaryExpr)
		if !ok || q.Op != token.QUO {
			return true
		}
		top := arithmeticTop(stack)
		for _, pair := range [][2]string{{"M", "N"}, {"N", "M"}} {
			for base := range selectors(q.Y, pair[0], false) {
				if selectors(top, pair[1], true)[base] > 0 {
					out = append(out, q.Pos())
					return true
				}
			}
		}
		return true
	})
	return out
}

// arithmeticTop is the widest expression the top of stack is arithmetic
// in: up through binary operators, parentheses and conversions.
func arithmeticTop(stack []ast.Node) ast.Expr {
	top := stack[len(stack)-1].(ast.Expr)
	for i := len(stack) - 2; i >= 0; i-- {
		switch a := stack[i].(type) {
		case *ast.BinaryExpr, *ast.ParenExpr:
			top = a.(ast.Expr)
		case *ast.CallExpr:
			if len(a.Args) != 1 {
				return top
			}
			top = a
		default:
			return top
		}
	}
	return top
}

// selectors counts e's selectors .field by the text of their base; with
// numerators, only those outside every divisor.
func selectors(e ast.Expr, field string, numerators bool) map[string]int {
	out := map[string]int{}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if x.Sel.Name == field {
				out[types.ExprString(x.X)]++
			}
		case *ast.BinaryExpr:
			if numerators && x.Op == token.QUO {
				ast.Inspect(x.X, walk)
				return false
			}
		}
		return true
	}
	ast.Inspect(e, walk)
	return out
}

func parsesConfigPattern(c *ast.CallExpr) bool {
	fn, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || fn.Sel.Name != "ParsePattern" || len(c.Args) != 1 {
		return false
	}
	arg, ok := c.Args[0].(*ast.SelectorExpr)
	return ok && arg.Sel.Name == "SparsePattern"
}
