package workloads

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/quote"
)

// MaxTraceBytes bounds a trace file. The largest built-in model's
// per-layer trace (bert-large, 145 rows) is 12 KB, about 80 bytes a row,
// so 64 MiB holds more than half a million rows: a 1000-layer network of
// 8 GEMMs a layer, one row per GEMM, is under 1 MiB. The bound keeps a
// device (/dev/zero) or a huge file named by mistake from being read
// into memory without end.
const MaxTraceBytes = 64 << 20

// readTrace reads what a parser is given, up to MaxTraceBytes: a reader
// that does not end (a device, a pipe held open) is refused once it has
// passed the bound, as Load refuses such a file before reading it.
func readTrace(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxTraceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read trace %s: %w", name, err)
	}
	if len(data) > MaxTraceBytes {
		return nil, fmt.Errorf("read trace %s: above the limit of %d bytes (%d MiB) for a trace",
			name, MaxTraceBytes, MaxTraceBytes>>20)
	}
	return data, nil
}

// Load reads a trace file, CSV or JSON by its extension (.csv, .json),
// and checks the weight file of every row that names one.
// Relative weight paths in the rows are taken relative to the file's
// directory and returned joined with it. A CSV trace (and a JSON trace
// without "name") is named after the file, without the extension.
func Load(path string) (*Trace, error) {
	t, _, err := LoadSHA256(path)
	return t, err
}

// LoadSHA256 is Load that also returns the SHA-256 (hex) of the bytes it
// parsed, for provenance: the file is read once, so the hash is of what
// the trace was made from even if the file changes afterwards.
func LoadSHA256(path string) (*Trace, string, error) {
	t, sum, err := loadFile(path)
	if err != nil {
		return nil, "", err
	}
	if err := CheckWeights(t); err != nil {
		return nil, "", fmt.Errorf("trace %s: %w", path, err)
	}
	return t, sum, nil
}

// loadFile parses a trace file, resolves its weight paths and returns
// the SHA-256 of its bytes.
func loadFile(path string) (*Trace, string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	parse := map[string]func(io.Reader, string) (*Trace, error){
		".csv":  ParseCSV,
		".json": ParseJSON,
	}[ext]
	if parse == nil {
		return nil, "", fmt.Errorf("trace %s: unknown extension %s (want .csv or .json)", path, quote.Q(ext))
	}
	data, err := configs.ReadRegular(path, MaxTraceBytes, "a trace file")
	if err != nil {
		return nil, "", fmt.Errorf("trace %s: %w", path, err)
	}
	t, err := parse(bytes.NewReader(data), path)
	if err != nil {
		return nil, "", err
	}
	if t.Name == path { // named after the file: a name printed in tables, escaped
		t.Name = quote.Text(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	}
	dir := filepath.Dir(path)
	for i := range t.GEMMs {
		w := t.GEMMs[i].Weights
		if w != "" && !filepath.IsAbs(w) {
			t.GEMMs[i].Weights = filepath.Join(dir, w)
		}
	}
	sum := sha256.Sum256(data)
	return t, hex.EncodeToString(sum[:]), nil
}

// CheckWeights loads the weight file of every row that names one and
// checks it against the row (shape, pattern), so that every command that
// loads a trace refuses a missing or unpruned weight, as `stcsim trace
// check` does.
func CheckWeights(t *Trace) error {
	for _, g := range t.GEMMs {
		if g.Weights == "" {
			continue
		}
		if _, err := LoadRowWeights(g); err != nil {
			return fmt.Errorf("column weights: %w", err)
		}
	}
	return nil
}
