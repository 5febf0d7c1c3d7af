package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// These tests hold issue 51's outputs outside the --out guard: every
// file a command writes is refused, exit 2 before anything runs, when it
// is a link, an input of the command or cannot be made.

// guardedRun runs a command as main does (a panic is exit 3) and fails
// the test on a panic: none of these cases may reach the backstop.
func guardedRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	stdout, stderr, code = capture(t, func() int { return guarded(args) })
	if code == exitPanic {
		t.Fatalf("%v panicked: %s", args, stderr)
	}
	return stdout, stderr, code
}

// wantRefused checks exit 2 with a one-line message saying each of want.
func wantRefused(t *testing.T, args []string, want ...string) {
	t.Helper()
	_, se, code := guardedRun(t, args...)
	if code != exitUsage {
		t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, se)
	}
	for _, w := range want {
		if !strings.Contains(se, w) {
			t.Errorf("%v: %q does not say %q", args, se, w)
		}
	}
	if len(se) > 400 {
		t.Errorf("%v: a %d-byte message", args, len(se))
	}
}

func unchanged(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("%s changed: %q %v", path, b, err)
	}
}

func TestSaveSummaryIsGuarded(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(repoRoot, "validation", "points", "a100-public.csv"))
	if err != nil {
		t.Fatal(err)
	}
	points := writeFile(t, dir, "v.csv", string(src))
	target := writeFile(t, dir, "elsewhere.json", "keep")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Link(points, hard); err != nil {
		t.Fatal(err)
	}
	base := []string{"validate", "--points", points, "--summary-label", "x", "--quiet", "--no-cache"}
	wantRefused(t, append(base, "--save-summary", points), "--save-summary", "is the input")
	wantRefused(t, append(base, "--save-summary", hard), "--save-summary", "is the input")
	wantRefused(t, append(base, "--save-summary", link), "--save-summary", "symbolic link")
	wantRefused(t, append(base, "--save-summary", filepath.Join(dir, "no", "such", "s.json")), "--save-summary")
	unchanged(t, points, string(src))
	unchanged(t, target, "keep")
}

// npy writes a 4x8 float32 weight.
func npy(t *testing.T, path string) []byte {
	t.Helper()
	data := make([]float32, 32)
	for i := range data {
		data[i] = float32(i%7) - 3
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tensorfile.WriteNPY(f, []int{4, 8}, data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := os.ReadFile(path)
	return b
}

func TestPruneOutIsGuarded(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w.npy")
	npy(t, w)
	pd := filepath.Join(dir, "pd")
	if _, se, code := guardedRun(t, "prune", "--in", w, "--out", pd); code != exitOK {
		t.Fatalf("prune: exit %d: %s", code, se)
	}
	pruned := filepath.Join(pd, "pruned.npy")
	before, _ := os.ReadFile(pruned)
	wantRefused(t, []string{"prune", "--in", pruned, "--out", pd}, "--out", "is the input")
	unchanged(t, pruned, string(before))

	// A link among the files prune writes is refused, its target kept.
	target := writeFile(t, dir, "elsewhere.json", "keep")
	os.Remove(filepath.Join(pd, "summary.json"))
	if err := os.Symlink(target, filepath.Join(pd, "summary.json")); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, []string{"prune", "--in", w, "--out", pd}, "summary.json", "symbolic link")
	unchanged(t, target, "keep")
}

func TestWeightsOutIsGuarded(t *testing.T) {
	dir := inScratch(t)
	target := writeFile(t, dir, "elsewhere.npy", "keep")
	os.Mkdir("w", 0o755)
	if err := os.Symlink(target, filepath.Join("w", "conv.npy")); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, []string{"trace", "import", "workloads/testdata/tiny.onnx", "--batch", "4", "--weights-out", "w"},
		"conv.npy", "symbolic link")
	unchanged(t, target, "keep")
	// A file where the directory would be: refused before the import.
	writeFile(t, dir, "file", "x")
	wantRefused(t, []string{"trace", "import", "workloads/testdata/tiny.onnx", "--batch", "4", "--weights-out", "file"},
		"--weights-out", "not a directory")
	// The weights are written whole and a second import replaces them.
	os.Remove(filepath.Join("w", "conv.npy"))
	for range 2 {
		if _, se, code := guardedRun(t, "trace", "import", "workloads/testdata/tiny.onnx", "--batch", "4", "--weights-out", "w"); code != exitOK {
			t.Fatalf("import: exit %d: %s", code, se)
		}
	}
	entries, _ := os.ReadDir("w")
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("%s left in w", e.Name())
		}
	}
}

func TestTraceDBIsGuarded(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("t", 300)+".sqlite3")
	wantRefused(t, []string{"run", "--gemm", "64x64x64", "--no-cache", "--trace-db", long}, "--trace-db", "file name of 308 bytes")
	// SQLite opens no path over 512 bytes (measured: 447 bytes open, 649 not).
	deep := filepath.Join(dir, strings.Repeat("d", 200), strings.Repeat("e", 200), strings.Repeat("f", 200), "t.sqlite3")
	os.MkdirAll(filepath.Dir(deep), 0o755)
	wantRefused(t, []string{"run", "--gemm", "64x64x64", "--no-cache", "--trace-db", deep}, "--trace-db", "full path")
	wantRefused(t, []string{"run", "--gemm", "64x64x64", "--no-cache", "--trace-db", "file:x.sqlite3"}, "--trace-db", "URI")
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left in %s: %v", dir, entries)
	}
}

func TestOutOnADanglingLinkIsRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out")
	if err := os.Symlink(filepath.Join(dir, "missing"), link); err != nil {
		t.Fatal(err)
	}
	// 4096^3 on 108 SMs would take minutes: the refusal comes first.
	wantRefused(t, []string{"run", "--gemm", "4096x4096x4096", "--no-cache", "--out", link}, "--out", "symbolic link to nothing")
	wantRefused(t, []string{"prune", "--in", filepath.Join(dir, "none.npy"), "--out", link}, "--out", "symbolic link to nothing")
}

// --refine under a --max-work that the fast points fit but their
// instruction-level reruns do not: exit 2 before the store is made.
func TestRefineAboveMaxWorkStoresNothing(t *testing.T) {
	dir := t.TempDir()
	spec := writeFile(t, dir, "fast.yaml", tinyFastSweep)
	db := filepath.Join(dir, "r.db")
	wantRefused(t, []string{"sweep", spec, "--db", db, "--refine", "1", "--max-work", "1000", "--quiet", "--no-cache"},
		"--refine 1", "--max-work")
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was created")
	}
}

// A NaN or infinite weight is refused by trace check and run, as prune
// refuses it (issue 51: it passed both).
func TestNaNWeightIsRefused(t *testing.T) {
	dir := t.TempDir()
	data := make([]float32, 32) // 4 x 8, 2:4 along K
	for i := range data {
		if i%4 < 2 {
			data[i] = 1
		}
	}
	data[9] = float32(nan())
	f, err := os.Create(filepath.Join(dir, "w.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tensorfile.WriteNPY(f, []int{4, 8}, data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	trace := writeFile(t, dir, "t.csv", "name,m,n,k,precision,sparsity,count,batch,weights\nfc,4,64,8,fp16,2:4,1,1,w.npy\n")
	for _, args := range [][]string{
		{"trace", "check", trace},
		{"run", "--workload", trace, "--no-cache", "--set", "gpu.sm_count=4"},
		{"prune", "--in", filepath.Join(dir, "w.npy"), "--out", filepath.Join(dir, "pd")},
	} {
		wantRefused(t, args, "w.npy", "row 1, column 1 is NaN")
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}
