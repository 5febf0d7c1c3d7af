package workloads

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/internal/testfiles"
)

// loadWithin runs Load and fails the test if it does not return within a
// few seconds (a FIFO or a device read without end).
func loadWithin(t *testing.T, path string) error {
	t.Helper()
	return testfiles.Within(t, "Load("+path+")", func() error {
		_, err := Load(path)
		return err
	})
}

// A device, a FIFO or a directory named as a trace is refused before
// anything is read: /dev/zero is never read into memory, a FIFO with no
// writer does not hang.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, ext := range []string{".csv", ".json"} {
		zero := testfiles.DevZero(t, dir, "zero"+ext)
		fifo := testfiles.FIFO(t, dir, "fifo"+ext)
		sub := filepath.Join(dir, "dir"+ext)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, zero, fifo, sub)
	}
	for _, p := range paths {
		err := loadWithin(t, p)
		if err == nil || !strings.Contains(err.Error(), "trace "+p+": not a regular file") {
			t.Errorf("Load(%s): %v, want \"trace %s: not a regular file\"", p, err, p)
		}
	}
}

// endless is a reader that never ends (a device or a pipe held open).
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// The parsers, called from Go on a reader that never ends, stop once
// they are past MaxTraceBytes with an error naming the trace.
func TestParsersStopAtTheTraceLimit(t *testing.T) {
	for name, parse := range map[string]func(io.Reader, string) (*Trace, error){
		"ParseCSV": ParseCSV, "ParseJSON": ParseJSON} {
		_, err := parse(endless{}, "stream")
		if err == nil || !strings.Contains(err.Error(), "read trace stream: above the limit") {
			t.Errorf("%s on an endless reader: %v, want the size limit", name, err)
		}
	}
}

// A trace above MaxTraceBytes is refused by its size before it is read;
// a large plausible one (a 1000-layer network of 8 GEMMs a layer, one
// row per GEMM) loads.
func TestTraceSizeLimit(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.csv")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(huge, MaxTraceBytes+1); err != nil {
		t.Fatal(err)
	}
	if err := loadWithin(t, huge); err == nil || !strings.Contains(err.Error(), "above the limit") {
		t.Errorf("a trace of MaxTraceBytes+1 bytes: %v, want a size error", err)
	}

	var b strings.Builder
	b.WriteString("name,m,n,k,precision,sparsity,count,batch,weights,note,unpadded_m,unpadded_k,sparse_operand\n")
	for l := range 1000 {
		for g := range 8 {
			fmt.Fprintf(&b, "layers.%d.gemm%d,12288,4096,12288,fp16,2:4,1,1,,,,,\n", l, g)
		}
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(big)
	if err != nil || len(tr.GEMMs) != 8000 {
		t.Fatalf("8000-row trace (%d bytes): %v", b.Len(), err)
	}
}
