package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stcsim/stcsim/internal/bug"
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

func workerBug(i int) { _ = make([]int, 2)[i] } // index out of range for i >= 2

// A panic on a worker goroutine (a simulation's, a sweep unit's), kept by
// internal/bug and re-raised after the workers are done, is reported as
// the edge's own: exit 3, one line naming the worker's line, not Go's
// exit 2 and stack dump.
func TestWorkerPanicIsReportedInOneLine(t *testing.T) {
	register(&command{name: "test-worker-panic", run: func(args []string) int {
		var caught bug.Catcher
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); caught.Do(func() { workerBug(i) }) }()
		}
		wg.Wait()
		caught.Raise()
		return exitOK
	}})
	defer delete(commands, "test-worker-panic")
	_, se, code := capture(t, func() int { return guarded([]string{"test-worker-panic"}) })
	if code != exitPanic || strings.Count(se, "\n") != 1 || !strings.Contains(se, "workerBug (panic_test.go:") {
		t.Errorf("exit %d, report %q: want exit %d naming workerBug's line", code, se, exitPanic)
	}
}

// Issue 51's crash models exit 0 (the Slice, which is valid ONNX) or 2
// (the Reshape), from both trace import and run --workload: neither
// reaches the backstop.
func TestHostileModelsNeverPanic(t *testing.T) {
	for _, name := range []string{"issue51-slice-step.onnx", "issue51-reshape-rank.onnx"} {
		p := filepath.Join(repoRoot, "workloads", "testdata", name)
		want := exitOK
		if name == "issue51-reshape-rank.onnx" {
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
	for _, name := range []string{"issue51-slice-step.onnx", "issue51-reshape-rank.onnx", "tiny.onnx"} {
		if b, err := os.ReadFile(filepath.Join(repoRoot, "workloads", "testdata", name)); err == nil {
			f.Add(b, false)
		}
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
