package validation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/internal/testfiles"
)

const pointsHeader = "id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock\n"

// A device, a FIFO or a directory given as --points is refused before it
// is read, quickly; so is a file above MaxPointsBytes.
func TestLoadPointsRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := testfiles.FIFO(t, dir, "fifo.csv")
	huge := filepath.Join(dir, "huge.csv")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxPointsBytes+1); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/dev/zero": "not a regular file",
		fifo: "not a regular file", dir: "not a regular file",
		huge: "above the limit"} {
		err := testfiles.Within(t, "LoadPoints("+p+")", func() error {
			_, err := LoadPoints(p)
			return err
		})
		if err == nil || !strings.HasPrefix(err.Error(), "points file "+p+": ") ||
			!strings.Contains(err.Error(), want) {
			t.Errorf("LoadPoints(%s): %v, want %q", p, err, want)
		}
	}
}

// Bad rows get messages naming the file, line, column and value, and a
// speedup that contradicts the row's own times is refused.
func TestPointsErrors(t *testing.T) {
	row := func(dense, sparse, unit, speedup string) string {
		return pointsHeader + "g,A100,fp16,gemm,64,64,64," + dense + "," +
			sparse + "," + unit + "," + speedup + ",x,,\n"
	}
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "p.csv:1: empty file: want the header id,hardware"},
		{"speedup abc", row("10", "8", "us", "abc"), `p.csv:2: column speedup: "abc": want a finite number > 0`},
		{"m not a number", strings.Replace(row("10", "8", "us", ""), ",64,", ",6x4,", 1), `p.csv:2: column m: "6x4": want a whole number`},
		{"contradicting speedup", row("10", "8", "us", "5"), "p.csv:2: column speedup: 5 contradicts the row's dense 10 and sparse 8 us"},
		{"speedup of throughputs inverted", row("100", "150", "TFLOPS", "0.6667"), "column speedup: 0.6667 contradicts"},
		{"bad quote", pointsHeader + "g,A100,fp16,\"gemm,64\n", "p.csv:2:"},
		{"header only", pointsHeader, "p.csv:1: no rows after the header"},
		{"BOM and header only", "\ufeff" + pointsHeader, "p.csv:1: no rows after the header"},
		{"huge throughput", row("1e308", "484", "TFLOPS", ""), "p.csv:2: column dense: 1e+308 TFLOPS is outside"},
		{"tiny time", row("1e-320", "1", "us", ""), "p.csv:2: column dense: 1e-320 us is outside"},
		{"huge speedup", row("10", "0.01", "us", "1000"), "column speedup: 1000 is outside 0.01..100"},
	} {
		_, err := ParsePoints(strings.NewReader(c.text), "p.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "strconv") {
			t.Errorf("%s: %v: the parser's own words", c.name, err)
		}
	}
	// Within 1 % (the rounding of published figures) is accepted, for
	// times (dense / sparse) and throughputs (sparse / dense).
	for _, text := range []string{row("870", "630", "us", "1.382"),
		row("10", "8", "us", "1.26"), row("302.3", "484", "TFLOPS", "1.601"),
		row("1", "1", "ms", ""), "\ufeff" + row("10", "8", "us", "")} {
		if _, err := ParsePoints(strings.NewReader(text), "p.csv"); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// The shared collection passes every check.
func TestSharedPointsLoad(t *testing.T) {
	pts, err := LoadPoints(filepath.Join("points", "a100-public.csv"))
	if err != nil || len(pts) == 0 {
		t.Fatalf("a100-public.csv: %d points, %v", len(pts), err)
	}
}

// The layout column: three letters on a gemm row; a column-major C runs
// the transposed problem as CUTLASS does (N x M, nn becoming tt, the
// measured A the row's B), a row-major C the problem as given.
func TestPointsLayout(t *testing.T) {
	hdr := pointsHeader[:len(pointsHeader)-1] + ",harness,layout\n"
	row := func(prec, layout string) string {
		return hdr + "g,A100," + prec + ",gemm,3456,4096,8192,986,,us,,x,,,," + layout + "\n"
	}
	for _, c := range []struct {
		layout, want string
		m, n         int
		operand      string
	}{{"", "", 3456, 4096, ""}, {"nnn", "tt", 4096, 3456, "activations"},
		{"ntn", "nt", 4096, 3456, "activations"}, {"tnn", "tn", 4096, 3456, "activations"},
		{"ttt", "tt", 3456, 4096, ""}, {"ntt", "nt", 3456, 4096, ""}} {
		pts, err := ParsePoints(strings.NewReader(row("fp16", c.layout)), "p.csv")
		if err != nil {
			t.Fatalf("%s: %v", c.layout, err)
		}
		g := pts[0].Row()
		if g.Layout != c.want || g.M != c.m || g.N != c.n || g.SparseOperand != c.operand {
			t.Errorf("%s: row %dx%d layout %q operand %q, want %dx%d %q %q", c.layout,
				g.M, g.N, g.Layout, g.SparseOperand, c.m, c.n, c.want, c.operand)
		}
	}
	for _, c := range []struct{ text, want string }{
		{row("fp16", "nn"), `p.csv:2: column layout: "nn": want three letters`},
		{row("fp16", "nxn"), `column layout: "nxn"`},
		{row("int8", "nnn"), "layout tt at int8"},
		{hdr + "bw,A100,fp16,bandwidth,,,,1500,,GB/s,,x,,,,nnn\n", `column layout: "nnn" on a bandwidth row`},
	} {
		if _, err := ParsePoints(strings.NewReader(c.text), "p.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// A bandwidth row's m, n and k are a gpu-l2-stream row's shape (threads
// per CTA, the buffer in doubles, CTAs per SM): all three on such a row,
// within what the kernel can run; a lat-l2-all row's n is its chase's
// footprint in KiB. Otherwise the file is refused naming the line and
// column.
func TestPointsStreamShape(t *testing.T) {
	const hdr = pointsHeader
	row := func(id, m, n, k string) string {
		return hdr + id + ",A100-80GB,,bandwidth," + m + "," + n + "," + k + ",1500,,GB/s,,x,,\n"
	}
	latRow := func(id, m, n, k string) string {
		return hdr + id + ",A100-80GB,,latency," + m + "," + n + "," + k + ",205.5,,cycles,,x,,\n"
	}
	pts, err := ParsePoints(strings.NewReader(row("bw-l2-stream-store-x", "640", "4096", "2")), "p.csv")
	if err != nil || pts[0].M != 640 || pts[0].N != 4096 || pts[0].K != 2 {
		t.Fatalf("a shaped row: %+v, %v", pts, err)
	}
	if pts, err := ParsePoints(strings.NewReader(latRow("lat-l2-all-x", "", "8178", "")), "p.csv"); err != nil || pts[0].N != 8178 {
		t.Fatalf("a chase row with its footprint: %+v, %v", pts, err)
	}
	for _, c := range []struct{ text, want string }{
		{row("bw-dram", "640", "4096", "2"), "p.csv:2: columns m, n, k: only gpu-l2-stream rows"},
		{row("bw-l2-stream-store-x", "640", "4096", ""), "all three"},
		{row("bw-l2-stream-store-x", "100", "4096", "2"), "column m: the threads per CTA"},
		{row("bw-l2-stream-read-x", "1024", "4096", "3"), "exceed an SM's 2048 threads"},
		{row("bw-l2-stream-read-x", "1024", "16", "2"), "column n: the buffer's length"},
		{latRow("lat-l2-all-x", "", "", ""), "column n: a lat-l2-all row needs its footprint"},
		{latRow("lat-l2-all-x", "32", "8178", ""), "column n: a lat-l2-all row needs its footprint"},
		{latRow("lat-dram", "", "8178", ""), "only a lat-l2-all row has a footprint"},
	} {
		if _, err := ParsePoints(strings.NewReader(c.text), "p.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// The pattern column: a pattern tensorcore.ParsePattern accepts, on a gemm
// row with a sparse time, becomes the row's sparsity (so the row runs it
// whatever the config's key); a malformed pattern, or one on a row
// without a sparse gemm value, is refused naming the file, line, column
// and value.
func TestPointsPattern(t *testing.T) {
	hdr := pointsHeader[:len(pointsHeader)-1] + ",harness,layout,pattern\n"
	row := func(sparse, pattern string) string {
		return hdr + "g,RTX-3090,fp16,gemm,768,4096,768,0.1218," + sparse + ",ms,,x,,,,ttt," + pattern + "\n"
	}
	for pat, want := range map[string]string{"": "2:4", "128:2:8": "128:2:8", "1:4": "1:4"} {
		pts, err := ParsePoints(strings.NewReader(row("0.0369", pat)), "p.csv")
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		if g := pts[0].Row(); g.Sparsity != want {
			t.Errorf("pattern %q: row sparsity %q, want %q", pat, g.Sparsity, want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{row("0.0369", "64:2:3"), `p.csv:2: column pattern: bad sparsity pattern 64:2:3`},
		{row("0.0369", "5:4"), `p.csv:2: column pattern: bad sparsity pattern "5:4"`},
		{row("0.0369", "0:4"), `p.csv:2: column pattern:`},
		{row("0.0369", "two:four"), `p.csv:2: column pattern:`},
		{row("", "128:2:8"), `p.csv:2: column pattern: "128:2:8" on a row without a sparse gemm value`},
		{hdr + "bw,A40,,bandwidth,,,,680,,GB/s,,x,,,,,2:4\n", `column pattern: "2:4" on a row without`},
	} {
		if _, err := ParsePoints(strings.NewReader(c.text), "p.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
