package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output path that is a symbolic link is refused before anything
// runs (an atomic write would replace the link with a file instead of
// writing where it points), by every command that writes a file; the
// link and its target are left as they were.
func TestOutputOntoASymlinkIsRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	svg := filepath.Join(dir, "link.svg")
	if err := os.Symlink(target, svg); err != nil {
		t.Fatal(err)
	}
	spec := writeFile(t, dir, "s.yaml", "workloads: [{gemms: [64x64x64]}]\ngrid: {gpu.sm_count: [4]}\n")
	for _, args := range [][]string{
		{"results", "export", filepath.Join(dir, "none.db"), "--out", link},
		{"plot", filepath.Join(dir, "none.db"), "--x", "gpu.sm_count", "--out", svg},
		{"sweep", spec, "--db", link, "--quiet"},
	} {
		_, errOut, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage || !strings.Contains(errOut, "symbolic link") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%v replaced the link", args)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep\n" {
			t.Fatalf("%v wrote through the link: %q", args, b)
		}
	}
}
