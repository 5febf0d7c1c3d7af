package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// dirContents is every entry of dir with its contents ("<dir>" for a
// directory).
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			out[e.Name()] = "<dir>"
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

func sameContents(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for n, w := range want {
		if g, ok := got[n]; !ok || g != w {
			t.Errorf("%s: %s removed or changed", what, n)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: %s appeared", what, n)
		}
	}
}

// tinyRun runs stcsim run with a small GPU and returns its exit status,
// standard output and standard error.
func tinyRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	stdout, stderr, code := capture(t, func() int {
		return dispatch(append([]string{"run", "--quiet", "--set", "gpu.sm_count=4"}, args...))
	})
	return code, stdout, stderr
}

// results export and plot refuse an --out that is their input store, by
// any spelling or through a link, before writing anything; merge refuses
// its output among its inputs.
func TestStoreCommandsRefuseToOverwriteTheirInput(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sw")
	os.Mkdir(sub, 0o755)
	newStore := func(name string) string {
		p := filepath.Join(sub, name)
		st, err := store.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	j1, j3, png := newStore("j1.db"), newStore("j3.db"), newStore("j4.png")
	link := filepath.Join(sub, "link.db")
	if err := os.Symlink("j1.db", link); err != nil {
		t.Fatal(err)
	}
	before := dirContents(t, sub)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"results", "export", j1, "--out", j1}, "is the input store"},
		{[]string{"results", "export", j3, "--out", filepath.Join(sub, "..", "sw", "j3.db")}, "is the input store"},
		{[]string{"results", "export", j1, "--format", "json", "--out", link}, "is a symbolic link"},
		{[]string{"plot", png, "--x", "gpu.sm_count", "--out", png}, "is the input store"},
		{[]string{"merge", link, j1}, "is the output store"},
	} {
		_, stderr, code := capture(t, func() int { return dispatch(c.args) })
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, stderr, c.want)
		}
	}
	sameContents(t, "the stores", dirContents(t, sub), before)
	out := filepath.Join(sub, "x.csv")
	if _, stderr, code := capture(t, func() int {
		return dispatch([]string{"results", "export", j1, "--out", out})
	}); code != exitOK {
		t.Errorf("export to a new file: exit %d: %s", code, stderr)
	}
}

// A run refuses, before simulating, an --out where it would replace or
// remove one of its inputs (a trace, a weights file, a config file), a
// file it did not write, or where a directory sits in a result's place;
// the directory is left as it was.
func TestRunRefusesOutThatWouldDestroyInputs(t *testing.T) {
	base := t.TempDir()
	trace := "name,m,n,k,precision,sparsity,count,batch\nl1,64,64,64,fp16,2:4,1,1\n"
	earlier := func(name string) string {
		dir := filepath.Join(base, name)
		if code, _, stderr := tinyRun(t, "--gemm", "64x64x64", "--out", dir); code != exitOK {
			t.Fatalf("first run: exit %d: %s", code, stderr)
		}
		return dir
	}
	// A 2:4-pruned 64x64 weight, and a trace row that uses it.
	w := make([]float32, 64*64)
	for i := range w {
		if i%4 < 2 {
			w[i] = float32(1 + i%7)
		}
	}
	var npy bytes.Buffer
	if err := tensorfile.WriteNPY(&npy, []int{64, 64}, w); err != nil {
		t.Fatal(err)
	}
	wdir := filepath.Join(base, "weights")
	os.Mkdir(wdir, 0o755)
	writeFile(t, wdir, "w.npy", npy.String())
	wtrace := writeFile(t, wdir, "net.csv", "name,m,n,k,precision,sparsity,count,batch,weights\n"+
		"l1,64,64,64,fp16,2:4,1,1,w.npy\n")

	for _, c := range []struct {
		name  string
		setup func() (dir string, args []string)
		want  string
	}{
		{"the trace is the earlier results.csv", func() (string, []string) {
			dir := earlier("a")
			writeFile(t, dir, "results.csv", trace)
			return dir, []string{"--workload", filepath.Join(dir, "results.csv")}
		}, "which is the input"},
		{"the trace, linked, is the earlier results.csv", func() (string, []string) {
			dir := earlier("b")
			writeFile(t, dir, "results.csv", trace)
			l := filepath.Join(base, "b.csv")
			os.Symlink(filepath.Join(dir, "results.csv"), l)
			return dir, []string{"--workload", l}
		}, "which is the input"},
		{"the config is the earlier config.yaml", func() (string, []string) {
			dir := earlier("c")
			return dir, []string{"--config", filepath.Join(dir, ".", "config.yaml"), "--gemm", "64x64x64"}
		}, "which is the input"},
		{"a weights file is an earlier plot", func() (string, []string) {
			dir := earlier("d")
			p := filepath.Join(dir, "gemm-roofline.png")
			os.Remove(p)
			if err := os.Link(filepath.Join(wdir, "w.npy"), p); err != nil {
				t.Fatal(err)
			}
			return dir, []string{"--workload", wtrace}
		}, "which is the input"},
		{"the trace is a results.csv stcsim did not write", func() (string, []string) {
			dir := filepath.Join(base, "e")
			os.Mkdir(dir, 0o755)
			writeFile(t, dir, "results.csv", trace)
			return dir, []string{"--workload", filepath.Join(dir, "results.csv")}
		}, "no stcsim manifest"},
		{"a directory where results.csv goes", func() (string, []string) {
			dir := earlier("f")
			os.Remove(filepath.Join(dir, "results.csv"))
			os.Mkdir(filepath.Join(dir, "results.csv"), 0o755)
			return dir, []string{"--gemm", "64x64x64"}
		}, "results.csv is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, args := c.setup()
			before := dirContents(t, dir)
			code, stdout, stderr := tinyRun(t, append(args, "--out", dir)...)
			if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, dir) {
				t.Errorf("exit %d, %q; want exit 2 saying %q and naming %s", code, stderr, c.want, dir)
			}
			if stdout != "" {
				t.Errorf("simulated and printed %q", stdout)
			}
			sameContents(t, "--out", dirContents(t, dir), before)
		})
	}
	if b, _ := os.ReadFile(filepath.Join(wdir, "w.npy")); string(b) != npy.String() {
		t.Error("the weights file changed")
	}
}

// A run replaces exactly the files the earlier run wrote: the user's
// files whose names look like plots stay, and every plot of the earlier
// run (the energy plots too) goes.
func TestRunReplacesOnlyItsOwnFiles(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "seq")
	os.Mkdir(dir, 0o755)
	writeFile(t, dir, "mydata-roofline.png", "mine")
	writeFile(t, dir, "notes-speedup.svg", "mine too")
	good := writeFile(t, base, "good.csv", "name,m,n,k,precision,sparsity,count,batch\n"+
		"l1,64,64,64,fp16,2:4,1,1\n")
	for _, args := range [][]string{{"--workload", good}, {"--gemm", "64x64x64"}} {
		if code, _, stderr := tinyRun(t, append(args, "--out", dir)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	got := dirContents(t, dir)
	if got["mydata-roofline.png"] != "mine" || got["notes-speedup.svg"] != "mine too" {
		t.Error("the user's files were removed or changed")
	}
	for n := range got {
		if strings.HasPrefix(n, "good-") {
			t.Errorf("the earlier run's %s survived", n)
		}
	}
	if _, ok := got["gemm-energy-layers.png"]; !ok {
		t.Errorf("the new run's plots are missing: %v", got)
	}
}
