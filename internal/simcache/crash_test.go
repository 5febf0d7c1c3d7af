package simcache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killKey is the entry the killed writer keeps rewriting.
var killKey = key("killed mid-write")

// killPayload is write i's payload: 16 MiB of byte i.
func killPayload(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 16<<20) }

// TestMain lets the test binary run as the writer that
// TestKilledWriterLeavesNoHalfEntry kills: with STCSIM_CACHE_WRITER=DIR it
// rewrites one entry of DIR until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("STCSIM_CACHE_WRITER"); dir != "" {
		c, err := Open(dir, 0)
		if err != nil {
			os.Exit(3)
		}
		for i := 0; ; i++ {
			c.Put(killKey, killPayload(i))
		}
	}
	os.Exit(m.Run())
}

// A writer killed with SIGKILL in the middle of writing an entry leaves
// no half entry: a reader finds either nothing or a whole payload one
// write stored, and the cache goes on working; the killed write's
// temporary file is not an entry and `cache clean` removes it.
func TestKilledWriterLeavesNoHalfEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a writer process")
	}
	dir := t.TempDir()
	var leftover []string
	for attempt := 0; attempt < 5 && len(leftover) == 0; attempt++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "STCSIM_CACHE_WRITER="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it while a temporary file is being written.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if tmps, _ := filepath.Glob(filepath.Join(dir, "*", ".tmp-*")); len(tmps) > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		leftover, _ = filepath.Glob(filepath.Join(dir, "*", ".tmp-*"))
	}
	if len(leftover) == 0 {
		t.Fatal("the writer was never killed mid-write")
	}
	c, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(killKey, nil); ok == Hit {
		if len(got) != 16<<20 || !bytes.Equal(got, killPayload(int(got[0]))) {
			t.Fatalf("the entry read after the kill is not a whole payload (%d bytes)", len(got))
		}
	}
	info, err := c.Stat()
	if err != nil || info.Entries > 1 {
		t.Errorf("after the kill: %+v, %v; want at most the one entry", info, err)
	}
	k := key("after the kill")
	c.Put(k, []byte("still works"))
	if got, ok := c.Get(k, nil); ok != Hit || string(got) != "still works" {
		t.Errorf("after the kill: got %q %v", got, ok)
	}
	if _, err := c.Clean(); err != nil {
		t.Fatal(err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*", ".tmp-*")); len(tmps) != 0 {
		t.Errorf("clean left %v", tmps)
	}
}

// A full disk (the write of an entry fails part of the way, ENOSPC) stores
// nothing and leaves nothing: no entry, no temporary file, one warning,
// the run goes on, and the next write that fits is stored.
func TestFullDiskStoresNothing(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	c.Warn = func(s string) { warnings = append(warnings, s) }
	full := func(f *os.File, b []byte) error {
		if _, err := f.Write(b[:len(b)/2]); err != nil {
			return err
		}
		return fmt.Errorf("write %s: %w", f.Name(), syscall.ENOSPC)
	}
	defer func(w func(*os.File, []byte) error) { writeAll = w }(writeAll)
	writeAll = full
	k := key("disk full")
	c.Put(k, bytes.Repeat([]byte("x"), 1<<20))
	c.Put(key("disk full 2"), []byte("y"))
	if _, ok := c.Get(k, nil); ok == Hit {
		t.Error("a half-written entry was read")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "??", "*")); len(files) != 0 {
		t.Errorf("files left: %v", files)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*", ".tmp-*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not cached") {
		t.Errorf("warnings %q, want one", warnings)
	}
	writeAll = func(f *os.File, b []byte) error { _, err := f.Write(b); return err }
	c.Put(k, []byte("fits now"))
	if got, ok := c.Get(k, nil); ok != Hit || string(got) != "fits now" {
		t.Errorf("after the disk freed: got %q %v", got, ok)
	}
}
