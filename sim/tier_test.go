package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// longTierEnv turns the long tier on.
const longTierEnv = "STCSIM_LONG_TESTS"

// longTier skips t unless STCSIM_LONG_TESTS is set (and -short is not):
// the tests that hold a fast path (wave and K extrapolation, the
// selection's samples) to the full simulation of large kernels, and the
// 8192^3 peak check, take minutes of CPU each. The README's `go test
// ./...` leaves them out so that it stays well under 10 minutes; .ci/run
// runs them after it, so every landing still passes them.
func longTier(t *testing.T, what string) {
	t.Helper()
	if testing.Short() || os.Getenv(longTierEnv) == "" {
		t.Skipf("long tier (%s): set %s=1 to run it; .ci/run does", what, longTierEnv)
	}
}

// Every test that calls longTier is one .ci/run runs with the long tier
// on: a long-tier test that CI's -run pattern missed would never run.
func TestLongTierRunsInCI(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(longTierEnv + `=1 go test .*-run '([^']+)' \./sim`).FindSubmatch(ci)
	if m == nil {
		t.Fatalf(".ci/run has no line `%s=1 go test ... -run '...' ./sim`", longTierEnv)
	}
	pattern, err := regexp.Compile(string(m[1]))
	if err != nil {
		t.Fatalf(".ci/run's -run pattern: %v", err)
	}
	var long []string
	files, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "longTier" {
						long = append(long, fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	sort.Strings(long)
	if len(long) == 0 {
		t.Fatal("no test calls longTier")
	}
	for _, name := range long {
		if !pattern.MatchString(name) {
			t.Errorf("%s is in the long tier but .ci/run's -run %q does not match it", name, m[1])
		}
	}
	t.Logf("long tier: %v", long)
}
