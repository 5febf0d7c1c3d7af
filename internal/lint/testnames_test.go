package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every test the reference docs (docs/*.md, README.md) name by its
// function name exists in some _test.go of the module: a test that was
// renamed or removed does not leave the docs citing it as evidence. The
// dated logs (docs/log) keep the names they were written with.
func TestDocsNameTestsThatExist(t *testing.T) {
	root := filepath.Join("..", "..")
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	cited := regexp.MustCompile("`[^`]*?\\b(Test[A-Z]\\w+)")
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cited.FindAllStringSubmatch(string(b), -1) {
			if !defined[m[1]] {
				t.Errorf("%s names %s, which no _test.go defines", filepath.Base(p), m[1])
			}
		}
	}
	if len(defined) < 100 {
		t.Fatalf("found only %d tests: is the module there?", len(defined))
	}
}
