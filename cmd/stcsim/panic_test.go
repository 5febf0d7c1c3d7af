package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A panic that reaches the command's edge is exit 3 with one line that
// names where it was raised and where to file it, the panic's value
// bounded (no stack dump, no 100 KB value).
func TestPanicIsReportedInOneLine(t *testing.T) {
	register(&command{name: "test-panic", run: func(args []string) int {
		var s []int
		_ = s[len(args)+5] // index out of range, as a bug would
		return exitOK
	}})
	register(&command{name: "test-panic-value", run: func(args []string) int {
		panic(strings.Repeat("\x1b[2J", 50000))
	}})
	defer delete(commands, "test-panic")
	defer delete(commands, "test-panic-value")
	for _, name := range []string{"test-panic", "test-panic-value"} {
		_, se, code := capture(t, func() int { return guarded([]string{name}) })
		if code != exitPanic {
			t.Errorf("%s: exit %d, want %d", name, code, exitPanic)
		}
		if strings.Count(se, "\n") != 1 || len(se) > 400 || strings.Contains(se, "\x1b") ||
			!strings.Contains(se, "internal error") || !strings.Contains(se, issuesURL) {
			t.Errorf("%s: report %q", name, se)
		}
		if name == "test-panic" && !strings.Contains(se, "panic_test.go") {
			t.Errorf("report %q does not say where", se)
		}
	}
}

// Issue 51's crash models exit 0 (the Slice, which is valid ONNX) or 2
// (the Reshape), from both trace import and run --workload: neither
// reaches the backstop.
func TestHostileModelsNeverPanic(t *testing.T) {
	dir := t.TempDir()
	models := map[string]string{
		"slice.onnx":   "08081207686f7374696c653acb010a140a01781201731a057368617065220553686170650a250a01730a0273740a02656e0a0261780a027370120273321a05736c6963652205536c6963650a1c0a01780a08772e7765696768741201791a026d6d22064d61744d756c1201672a0b080110073a0101420273742a0b080110073a01024202656e2a0b080110073a0100420261782a13080110073a09ffffffffffffffff7f420273705a130a0178120e0a0c080112080a0208080a0208405a1a0a08772e776569676874120e0a0c080112080a0208400a02082042040a001011",
		"reshape.onnx": "08081207686f7374696c653a460a1d0a01780a037368701201721a07726573686170652207526573686170651201672a0d088080808004100742037368705a130a0178120e0a0c080112080a0208080a02084042040a001011",
	}
	for name, h := range models {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want := exitOK
		if name == "reshape.onnx" {
			want = exitUsage
		}
		for _, args := range [][]string{
			{"trace", "import", p},
			{"run", "--workload", p, "--no-cache", "--mode", "dense", "--set", "gpu.sm_count=4"},
		} {
			_, se, code := guardedRun(t, args...)
			if code != want {
				t.Errorf("%v: exit %d, want %d: %s", args, code, want, se)
			}
			if code == exitUsage && (!strings.Contains(se, name) || len(se) > 400) {
				t.Errorf("%v: message %q", args, se)
			}
		}
	}
}

// FuzzTraceImport: stcsim trace import of any bytes as a .onnx or a
// profiler .json exits 0 or 2 (never 3, the backstop, nor 1), with every
// line of its standard error within 400 bytes and no raw control
// character.
//
//	go test ./cmd/stcsim -run '^$' -fuzz '^FuzzTraceImport$' -fuzztime 2000x -parallel 1
func FuzzTraceImport(f *testing.F) {
	for _, h := range []string{
		"08081207686f7374696c653acb010a140a01781201731a057368617065220553686170650a250a01730a0273740a02656e0a0261780a027370120273321a05736c6963652205536c6963650a1c0a01780a08772e7765696768741201791a026d6d22064d61744d756c1201672a0b080110073a0101420273742a0b080110073a01024202656e2a0b080110073a0100420261782a13080110073a09ffffffffffffffff7f420273705a130a0178120e0a0c080112080a0208080a0208405a1a0a08772e776569676874120e0a0c080112080a0208400a02082042040a001011",
		"08081207686f7374696c653a460a1d0a01780a037368701201721a07726573686170652207526573686170651201672a0d088080808004100742037368705a130a0178120e0a0c080112080a0208080a02084042040a001011",
	} {
		b, _ := hex.DecodeString(h)
		f.Add(b, false)
	}
	if b, err := os.ReadFile(filepath.Join(repoRoot, "workloads", "testdata", "tiny.onnx")); err == nil {
		f.Add(b, false)
	}
	f.Add([]byte(`{"traceEvents":[{"name":"aten::mm","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[2,3],[3,5]]}}]}`), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, profile bool) {
		p := filepath.Join(dir, "m.onnx")
		if profile {
			p = filepath.Join(dir, "m.json")
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, se, code := capture(t, func() int { return guarded([]string{"trace", "import", p, "--batch", "2"}) })
		if code != exitOK && code != exitUsage {
			t.Fatalf("exit %d: %.300q", code, se)
		}
		for _, line := range strings.Split(se, "\n") {
			if len(line) > 400 || strings.ContainsAny(line, "\x1b\x07") {
				t.Fatalf("a %d-byte line: %.300q", len(line), line)
			}
		}
	})
}
