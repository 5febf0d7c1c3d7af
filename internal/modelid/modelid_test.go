package modelid_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stcsim/stcsim"
	"github.com/stcsim/stcsim/internal/modelid"
)

// tree is the module's source on disk (this package is two levels down).
func tree(t *testing.T) fs.FS {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return os.DirFS(root)
}

// The embedded source is the tree's: the same simulator files (the import
// closure of sim, found in each independently), byte for byte. A package
// deeper than the embed patterns reach, or a file the build did not
// embed, fails here.
func TestEmbeddedSourceIsTheTree(t *testing.T) {
	disk, extDisk, err := modelid.Files(tree(t))
	if err != nil {
		t.Fatal(err)
	}
	emb, extEmb, err := modelid.Files(stcsim.Source)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(disk, "\n") != strings.Join(emb, "\n") {
		t.Fatalf("simulator files on disk\n%s\nembedded\n%s", strings.Join(disk, "\n"), strings.Join(emb, "\n"))
	}
	if strings.Join(extDisk, " ") != strings.Join(extEmb, " ") {
		t.Errorf("external imports on disk %v, embedded %v", extDisk, extEmb)
	}
	for _, f := range disk {
		a, err := fs.ReadFile(tree(t), f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := fs.ReadFile(stcsim.Source, f)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the embedded bytes are not the file's", f)
		}
	}
	// The simulator is more than its root: the rooms and the models it
	// times with are in, the command and the reports are not.
	joined := " " + strings.Join(disk, " ")
	for _, want := range []string{" sim/records.go", " sim/sm/", " tensorcore/", " memory/", " configs/"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s file among the simulator's", want)
		}
	}
	for _, not := range []string{" cmd/", " report/", "_test.go"} {
		if strings.Contains(joined, not) {
			t.Errorf("a %s file among the simulator's", not)
		}
	}
}

// mapFS copies the embedded source into a MapFS a test can edit.
func mapFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(stcsim.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(stcsim.Source, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A one-line change to any file of any simulator package (here: a
// comment line appended, the least a change can be) gives another
// identity; a change to a test file, to the command or to the reports
// does not.
func TestOneLineChangeChangesTheModel(t *testing.T) {
	src := mapFS(t)
	base, err := modelid.Of(src, nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := modelid.Of(mapFS(t), nil, "go")
	if again != base {
		t.Fatal("the identity of one source is not deterministic")
	}
	files, _, _ := modelid.Files(src)
	for _, f := range files {
		edited := mapFS(t)
		edited[f] = &fstest.MapFile{Data: append(append([]byte{}, src[f].Data...), "// one line\n"...)}
		if got, err := modelid.Of(edited, nil, "go"); err != nil || got == base {
			t.Errorf("%s changed by one line: identity unchanged (err %v)", f, err)
		}
	}
	for p := range src {
		if !strings.HasSuffix(p, "_test.go") && !strings.HasPrefix(p, "cmd/") && !strings.HasPrefix(p, "report/") {
			continue
		}
		edited := mapFS(t)
		edited[p] = &fstest.MapFile{Data: append(append([]byte{}, src[p].Data...), "// one line\n"...)}
		if got, _ := modelid.Of(edited, nil, "go"); got != base {
			t.Errorf("%s is not the simulator's, but a change to it changes the identity", p)
		}
	}
	if got, _ := modelid.Of(src, nil, "go2"); got == base {
		t.Error("another toolchain: identity unchanged")
	}
}

// A dependency's version is in the identity when the simulator imports
// it (Akita), not when only the command does.
func TestDependencyVersionsInTheModel(t *testing.T) {
	src := mapFS(t)
	deps := func(akita, plot string) []*debug.Module {
		return []*debug.Module{{Path: "github.com/sarchlab/akita/v3", Version: akita, Sum: "h1:a"},
			{Path: "gonum.org/v1/plot", Version: plot, Sum: "h1:p"}}
	}
	base, _ := modelid.Of(src, deps("v3.1.0", "v0.17.0"), "go")
	if got, _ := modelid.Of(src, deps("v3.1.1", "v0.17.0"), "go"); got == base {
		t.Error("another Akita: identity unchanged")
	}
	if got, _ := modelid.Of(src, deps("v3.1.0", "v0.18.0"), "go"); got != base {
		t.Error("another plot library (the simulator does not import it): identity changed")
	}
}

// The running test binary's identity is that of the source it embeds.
func TestIDOfTheRunningBuild(t *testing.T) {
	id, err := modelid.ID()
	if err != nil || len(id) != 64 {
		t.Fatalf("ID() = %q, %v", id, err)
	}
}

// BenchmarkOf is what a command pays once to name its model (parsing the
// imports of, and hashing, the embedded simulator source).
func BenchmarkOf(b *testing.B) {
	for b.Loop() {
		if _, err := modelid.Of(stcsim.Source, nil, "go"); err != nil {
			b.Fatal(err)
		}
	}
}
