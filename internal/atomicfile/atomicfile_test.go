package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	for _, text := range []string{"first", "second, longer"} {
		if err := Write(p, []byte(text)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != text {
			t.Errorf("read %q, want %q", b, text)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	only(t, dir, "out.json")
}

// A writer that fails leaves the earlier file as it was and no
// temporary file.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.npy")
	if err := Write(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	err := WriteWith(p, func(w io.Writer) error {
		w.Write([]byte("half of the n"))
		return errors.New("disk full")
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the old file became %q", b)
	}
	only(t, dir, "w.npy")
}

// A link at the destination is refused; its target is not written.
func TestWriteRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if err := Write(link, []byte("new")); !errors.Is(err, ErrSymlink) {
		t.Errorf("error %v, want ErrSymlink", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("target became %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}

// A 255-byte name leaves room for the temporary name.
func TestLongNames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, strings.Repeat("n", 255))
	if err := Write(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n := len(TempName(strings.Repeat("n", 255))); n+10 > 255 {
		t.Errorf("a temporary name of %d bytes and its digits", n)
	}
}

func only(t *testing.T, dir string, name string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want only %s", dir, names, name)
	}
}
