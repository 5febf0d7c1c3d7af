package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Error messages quote at most a few bytes of any input: each of these
// once printed its whole input back (1 MB, 300 KB, 200 KB, 65 KB).
func TestErrorMessagesAreBounded(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hdr := "name,m,n,k,precision,sparsity,count,batch\n"
	big := strings.Repeat("x", 1<<20)
	npyHdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), " + strings.Repeat("'z", 30000) + "}"
	npyHdr += strings.Repeat(" ", (64-(10+len(npyHdr)+1)%64)%64) + "\n"
	npy := "\x93NUMPY\x01\x00" + string([]byte{byte(len(npyHdr)), byte(len(npyHdr) >> 8)}) + npyHdr + strings.Repeat("\x00", 8)
	for name, args := range map[string][]string{
		"1 MB layer name":        {"trace", "check", write("name.csv", hdr+big+"\x01,64,64,64,fp16,2:4,1,1\n")},
		"1 MB duplicate name":    {"trace", "check", write("dup.csv", hdr+big+",64,64,64,fp16,2:4,1,1\n"+big+",64,64,64,fp16,2:4,1,1\n")},
		"100 000-digit M":        {"run", "--gemm", strings.Repeat("9", 100000) + "x64x64"},
		"100 KB --layer regex":   {"run", "--gemm", "64x64x64", "--layer", strings.Repeat("(", 100000)},
		"3 KB header":            {"trace", "check", write("hdr.csv", strings.Repeat("q", 3000)+"\n")},
		"65 KB .npy header":      {"prune", "--in", write("big.npy", npy), "--out", filepath.Join(dir, "o")},
		"100 KB unknown command": {strings.Repeat("c", 100000)},
		// issue 51: values the flag package and a few checks quoted whole.
		"100 KB --max-work":      {"run", "--gemm", "64x64x64", "--max-work", long},
		"100 KB bool flag":       {"run", "--gemm", "64x64x64", "--quiet=" + long},
		"100 KB int flag":        {"sweep", write("s.yaml", "workloads: [{gemms: [64x64x64]}]\n"), "--jobs", long},
		"100 KB unknown flag":    {"run", "--" + long},
		"100 KB --shard":         {"sweep", write("s2.yaml", "workloads: [{gemms: [64x64x64]}]\n"), "--shard", long},
		"100 KB --precision":     {"run", "--gemm", "64x64x64", "--precision", long},
		"100 KB micro precision": {"micro", "tc", "--precision", long},
		"100 KB plot --y":        {"plot", write("p.db", ""), "--x", "gpu.sm_count", "--y", long},
		"100 KB plot --x":        {"plot", write("p2.db", ""), "--x", long},
		"100 KB split-K suffix":  {"run", "--gemm", "64x64x64", "--set", "kernel.force=128x128x32_64x64_s5_splitk" + long},
		"100 KB --format":        {"validate", "--points", "x.csv", "--format", long},
		"ESC in a flag value":    {"run", "--gemm", "64x64x64", "--max-work", "\x1b[2J\x1b]0;pwned\x07"},
		"ESC in --set":           {"run", "--gemm", "64x64x64", "--set", "gpu.sm_count=\x1b[2J"},
		"1 MB validation row id": {"validate", "--quiet", "--no-cache", "--points", write("v.csv",
			"id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source,kernel,clock,harness,layout\n"+
				big+",A100-SXM4-40GB,fp16,peak,,,,311.2,,TFLOPS,,x,,,microbenchmark,\n")},
		"100 KB enum value":      {"run", "--gemm", "64x64x64", "--set", "sim.fidelity=" + long},
		"100 KB sparse pattern":  {"run", "--gemm", "64x64x64", "--set", "tensorcore.fp16.sparse_pattern=" + long},
		"100 KB --config":        {"run", "--gemm", "64x64x64", "--config", long},
		"100 KB sweep path":      {"sweep", long + ".yaml"},
		"100 KB merge input":     {"merge", filepath.Join(dir, "o.db"), long + ".db"},
		"ESC in a workload name": {"sweep", "--dry-run", write("e.yaml", "workloads: [{name: \"a\\e[2Jb\", gemms: [64x64x64]}]\n")},
		"ESC in a sweep label": {"sweep", "--dry-run", write("e2.yaml", "workloads: [{gemms: [64x64x64]}]\n"+
			"grid: {tensorcore.fp16.sparse_pattern: [\"2:4\\e]0;t\\a\"]}\n")},
	} {
		_, errOut, code := capture(t, func() int { return guarded(args) })
		if code != exitUsage {
			t.Errorf("%s: exit %d", name, code)
		}
		if len(errOut) > 400 {
			t.Errorf("%s: a %d-byte message: %.160s...", name, len(errOut), errOut)
		}
		if strings.ContainsAny(errOut, "\x1b\x07") {
			t.Errorf("%s: a raw control character in %q", name, errOut)
		}
	}
}

// long is a 100 KB flag value.
var long = strings.Repeat("9", 100000)

// An unknown flag is one line and a pointer to -h, not the usage.
func TestUnknownFlagIsOneLine(t *testing.T) {
	for _, args := range [][]string{{"run", "--frobnicate"}, {"sweep", "--frobnicate", "x.yaml"},
		{"trace", "import", "--frobnicate", "x.onnx"}, {"validate", "-frobnicate"}} {
		_, se, code := capture(t, func() int { return guarded(args) })
		if code != exitUsage || strings.Count(se, "\n") > 2 || !strings.Contains(se, "-frobnicate") ||
			!strings.Contains(se, "-h") {
			t.Errorf("%v: exit %d: %q", args, code, se)
		}
	}
}

// A --set quoted in a message is never cut inside its value: the key and
// the value are cut each on its own (a 46-byte --set was shown as
// "...per_clk=1" for =128).
func TestSetQuoteKeepsTheValue(t *testing.T) {
	_, se, _ := capture(t, func() int {
		return guarded([]string{"run", "--gemm", "64x64x64", "--set", "tensorcore.fp16.metadata_bits_per_clkX=1289"})
	})
	if !strings.Contains(se, "1289") || len(se) > 600 {
		t.Errorf("message %q", se)
	}
}

// A trace named after a file whose name holds an ESC prints it escaped.
func TestFileNamedWithAnEscapeIsPrintedEscaped(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a\x1b[2Jb.csv", "name,m,n,k,precision,sparsity,count,batch\nfc,64,64,64,fp16,2:4,1,1\n")
	out, se, code := capture(t, func() int { return guarded([]string{"trace", "check", p}) })
	if code != exitOK || strings.Contains(out+se, "\x1b") || !strings.Contains(out, `a\x1b[2Jb`) {
		t.Errorf("exit %d: %q %q", code, out, se)
	}
}
