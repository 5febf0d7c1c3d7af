package workloads

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/atomicfile"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// Weights is a layer's weight as the sparse A operand: the M x K matrix
// with its structured-sparse mask applied, and its compressed form (kept
// values plus the PTX-format metadata the replay loads).
type Weights struct {
	Path       string
	Matrix     tensorcore.Matrix
	Compressed *tensorcore.Compressed
}

// MetadataBytes is the size of the metadata of the whole matrix.
func (w *Weights) MetadataBytes() int { return w.Compressed.MetadataBytes() }

// Tile is the rows x cols block of the weight at (r0, c0), compressed with
// the weight's pattern: an MMA's A fragment for functional checks on a
// sample of tiles. c0 and cols must be multiples of the pattern's group.
func (w *Weights) Tile(r0, c0, rows, cols int) (*tensorcore.Compressed, error) {
	m, p := w.Matrix, w.Compressed.Pattern
	if r0 < 0 || c0 < 0 || rows <= 0 || cols <= 0 || r0+rows > m.Rows ||
		c0+cols > m.Cols {
		return nil, fmt.Errorf("weights %s: tile %dx%d at (%d, %d) is "+
			"outside the %dx%d weight", w.Path, rows, cols, r0, c0, m.Rows, m.Cols)
	}
	if c0%p.Group() != 0 || cols%p.Group() != 0 {
		return nil, fmt.Errorf("weights %s: tile columns %d..%d do not align "+
			"with the %s groups", w.Path, c0, c0+cols-1, p)
	}
	t := tensorcore.NewMatrix(rows, cols)
	for r := range rows {
		copy(t.Data[r*cols:(r+1)*cols], m.Data[(r0+r)*m.Cols+c0:(r0+r)*m.Cols+c0+cols])
	}
	return tensorcore.Compress(t, p)
}

// Names of the files `stcsim prune` writes into its output directory.
const (
	ValuesFile   = "values.npy"   // kept values, float32 [M, K*N/M]
	MetadataFile = "metadata.bin" // tensorcore.Compressed.Metadata words, little-endian, MetadataBytes long
	PrunedFile   = "pruned.npy"   // the pruned tensor, float32, in the input's own shape
	SummaryFile  = "summary.json" // PruneSummary
)

// ReadTensor reads a weight tensor: a .npy file, or one tensor of a
// .safetensors file named by tensor or by a "#NAME" suffix of the path
// (neither is needed when the file holds a single tensor).
func ReadTensor(path, tensor string) (*Tensor, error) {
	return readTensor(path, tensor, nil)
}

// ReadTensorSHA256 is ReadTensor that also returns the SHA-256 (hex) of
// the bytes of the file it read (less a .safetensors path's "#NAME"),
// hashed as they are parsed, for provenance.
func ReadTensorSHA256(path, tensor string) (*Tensor, string, error) {
	h := sha256.New()
	t, err := readTensor(path, tensor, h)
	if err != nil {
		return nil, "", err
	}
	return t, fmt.Sprintf("%x", h.Sum(nil)), nil
}

// readTensor is ReadTensor; a non-nil h receives every byte of the file.
// modelTensors are weights read from a model file that is not a weight
// file (an ONNX graph's initializers, in the GEMM orientation its
// importer gives them), by the "FILE#NAME" reference its rows name:
// registered by the importer when a run imports the model itself.
var modelTensors sync.Map

// The options that the package's errors name in their remedies, as the
// Go API names them (package field): the workload a run imports
// (importer.Resolve's name), the importer's WeightsDir, and prune's
// input (ReadTensor's path) and output directory (PruneResult.WriteDir's).
const (
	FieldWorkload   field.Name = "workload"
	FieldWeightsDir field.Name = "weights_dir"
	FieldPruneInput field.Name = "prune_input"
	FieldPruneDir   field.Name = "prune_dir"
)

// RegisterModelTensor makes ref ("FILE.onnx#NAME", FILE as the run names
// it) readable as a weights path for the rest of the process.
func RegisterModelTensor(ref string, t *Tensor) { modelTensors.Store(ref, t) }

func readTensor(path, tensor string, h hash.Hash) (*Tensor, error) {
	file, named := tensorPath(path)
	if tensor == "" {
		tensor = named
	}
	ext := strings.ToLower(filepath.Ext(file))
	if ext == ".onnx" {
		t, ok := modelTensors.Load(file + "#" + tensor)
		if !ok {
			return nil, field.Errorf("weights %s: an ONNX graph's weight is read when stcsim "+
				"runs the graph itself (run %s %s); for a trace file, write the "+
				"weights with stcsim trace import %s DIR", path, FieldWorkload, file, FieldWeightsDir)
		}
		if h != nil {
			if err := hashFile(h, file); err != nil {
				return nil, err
			}
		}
		return t.(*Tensor), nil
	}
	if ext != ".npy" && ext != ".safetensors" {
		return nil, fmt.Errorf("weights %s: unknown extension %s (want .npy or .safetensors)", path, quote.Q(ext))
	}
	if ext == ".npy" && tensor != "" {
		return nil, field.Errorf("weights %s: a .npy file holds one unnamed tensor; %s applies to .safetensors",
			path, tensorfile.FieldTensor)
	}
	if st, err := os.Stat(file); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("weights %s: not a regular file", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("open weights: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if h != nil {
		r = io.TeeReader(f, h)
	}
	var t *Tensor
	if ext == ".npy" {
		t, err = tensorfile.ReadNPY(r, file)
	} else {
		t, err = tensorfile.ReadSafetensors(r, file, tensor)
	}
	if err == nil && h != nil {
		// The readers require the end of the file; hash all of it anyway.
		if _, err = io.Copy(io.Discard, r); err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
	}
	return t, err
}

// PruneSummary is what `stcsim prune` reports and writes to summary.json.
type PruneSummary struct {
	Source string `json:"source"`
	Tensor string `json:"tensor,omitempty"`
	DType  string `json:"dtype"`
	Shape  []int  `json:"shape"`
	// GEMMShape is [M, K] of the A-operand view (see Tensor.GEMMView).
	GEMMShape [2]int `json:"gemm_shape"`
	Pattern   string `json:"pattern"`
	// Mode is "prune" (magnitude pruning) or "verify" (input must already
	// hold the pattern).
	Mode string `json:"mode"`
	// InputValid says whether the input already held the pattern;
	// InputError names the first row and group that broke it.
	InputValid bool   `json:"input_valid"`
	InputError string `json:"input_error,omitempty"`
	// ValidMask says whether the output holds the pattern (always true
	// after pruning; after verify, equal to InputValid).
	ValidMask bool  `json:"valid_mask"`
	Elements  int   `json:"elements"`
	NonzeroIn int64 `json:"nonzero_in"`
	// NonzeroOut and Sparsity (the zero fraction) describe the output.
	NonzeroOut int64   `json:"nonzero_out"`
	Sparsity   float64 `json:"sparsity"`
	// KeptMagnitude is sum |w| kept over sum |w| of the input (1 when the
	// input is all zeros).
	KeptMagnitude float64 `json:"kept_magnitude_fraction"`
	// Transposable: the mask holds the pattern along M too (prune
	// --transposable); PlainKeptMagnitude is then what the plain mask,
	// along K only, keeps of the same weights.
	Transposable       bool     `json:"transposable,omitempty"`
	PlainKeptMagnitude float64  `json:"plain_kept_magnitude_fraction,omitempty"`
	ValueBytes         int      `json:"value_bytes"` // as float32 in values.npy
	MetadataBytes      int      `json:"metadata_bytes"`
	Files              []string `json:"files,omitempty"`
	// Provenance is what produced the summary (absent in summaries
	// written before it was recorded, and from the Go API unless set).
	Provenance *PruneProvenance `json:"provenance,omitempty"`
}

// PruneProvenance records what produced a `stcsim prune` output: the
// tool version, the command line, the input as given with the SHA-256 of
// its file's bytes, and the options, enough to reproduce it.
type PruneProvenance struct {
	Version string `json:"version"`
	// Command is the command line (stcsim prune ...); empty when the
	// output was made through the library.
	Command []string `json:"command,omitempty"`
	// Input is the --in path as given; SHA256 is of the bytes of the
	// file it names (less a .safetensors path's "#NAME").
	Input  string `json:"input"`
	SHA256 string `json:"sha256"`
	// Tensor is the tensor read from a .safetensors file (by --tensor,
	// a "#NAME" suffix, or the file's only one); empty for .npy.
	Tensor  string `json:"tensor,omitempty"`
	Pattern string `json:"pattern"`
	// Verify is --verify: the input was checked, not pruned.
	Verify bool `json:"verify"`
	// Transposable is --transposable: the mask along K and M.
	Transposable bool `json:"transposable,omitempty"`
}

// PruneResult is a pruned (or verified) weight.
type PruneResult struct {
	Summary    PruneSummary
	Tensor     *Tensor // the input
	Pruned     tensorcore.Matrix
	Compressed *tensorcore.Compressed
}

// Prune prunes t's GEMM view by magnitude to pattern p (keep the p.N
// largest |w| of every p.M along K), or with verify only checks that it
// already holds p (an error names the first bad row and group). K must be
// a multiple of p.M, and no dimension of t zero.
func Prune(t *Tensor, source string, p tensorcore.Pattern, verify bool) (*PruneResult, error) {
	return prune(t, source, p, verify, nil)
}

// maskRule prunes or checks a matrix to a pattern other than the plain
// row-wise one (transposable.go); nil is PruneMagnitude and CheckPattern.
type maskRule interface {
	check(m tensorcore.Matrix, p tensorcore.Pattern) error
	prune(m tensorcore.Matrix, p tensorcore.Pattern) (tensorcore.Matrix, error)
	summarize(s *PruneSummary, in, out tensorcore.Matrix, p tensorcore.Pattern)
}

func prune(t *Tensor, source string, p tensorcore.Pattern, verify bool, rule maskRule) (*PruneResult, error) {
	m, err := t.GEMMView()
	if err != nil {
		return nil, fmt.Errorf("prune %s: %w", source, err)
	}
	if slices.Contains(t.Shape, 0) {
		return nil, fmt.Errorf("prune %s: shape %v has a zero dimension: "+
			"no weights to prune (%d x %d as M x K)", source, t.Shape, m.Rows, m.Cols)
	}
	if m.Cols%p.Group() != 0 {
		return nil, fmt.Errorf("prune %s: K = %d is not a multiple of %d, "+
			"the %s group width", source, m.Cols, p.Group(), p)
	}
	if err := finite(m); err != nil {
		return nil, fmt.Errorf("prune %s: %w", source, err)
	}
	s := PruneSummary{Source: source, Tensor: t.Name, DType: t.DType,
		Shape: t.Shape, GEMMShape: [2]int{m.Rows, m.Cols}, Pattern: p.String(),
		Mode: "prune", Elements: len(m.Data)}
	if verify {
		s.Mode = "verify"
	}
	check := tensorcore.CheckPattern
	if rule != nil {
		check = rule.check
	}
	inErr := check(m, p)
	s.InputValid = inErr == nil
	if inErr != nil {
		s.InputError = inErr.Error()
	}
	out := m
	switch {
	case verify:
	case rule != nil:
		if out, err = rule.prune(m, p); err != nil {
			return nil, fmt.Errorf("prune %s: %w", source, err)
		}
	default:
		if out, err = tensorcore.PrunePattern(m, p); err != nil {
			return nil, fmt.Errorf("prune %s: %w", source, err)
		}
	}
	s.ValidMask = check(out, p) == nil
	for i, v := range m.Data {
		if v != 0 {
			s.NonzeroIn++
		}
		if out.Data[i] != 0 {
			s.NonzeroOut++
		}
	}
	s.KeptMagnitude = keptFraction(m, out)
	if s.Elements > 0 {
		s.Sparsity = 1 - float64(s.NonzeroOut)/float64(s.Elements)
	}
	if rule != nil {
		rule.summarize(&s, m, out, p)
	}
	r := &PruneResult{Summary: s, Tensor: t, Pruned: out}
	if !s.ValidMask || p.Family() != tensorcore.FamilyNM {
		return r, nil // the compressed form (values, metadata) is N:M's
	}
	c, err := tensorcore.Compress(out, p)
	if err != nil {
		return nil, fmt.Errorf("prune %s: %w", source, err)
	}
	r.Compressed = c
	r.Summary.ValueBytes = 4 * len(c.Values)
	r.Summary.MetadataBytes = c.MetadataBytes()
	return r, nil
}

// keptFraction is sum |out| over sum |in| (1 when in is all zeros).
func keptFraction(in, out tensorcore.Matrix) float64 {
	var absIn, absOut float64
	for i, v := range in.Data {
		absIn += math.Abs(float64(v))
		absOut += math.Abs(float64(out.Data[i]))
	}
	if absIn == 0 {
		return 1
	}
	return absOut / absIn
}

func finite(m tensorcore.Matrix) error {
	for i, v := range m.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("value at row %d, column %d is %v", i/m.Cols, i%m.Cols, v)
		}
	}
	return nil
}

// WriteDir writes the compressed values, the metadata, the pruned tensor
// and summary.json into dir (created if missing); a pattern with no
// compressed form here (V:N:M, hierarchical) writes the pruned tensor
// and the summary. A result whose mask is not valid writes only the
// summary.
func (r *PruneResult) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("prune output: %w", err)
	}
	r.Summary.Files = nil
	if r.Compressed != nil {
		c := r.Compressed
		if err := writeFile(dir, ValuesFile, func(w io.Writer) error {
			return tensorfile.WriteNPY(w, []int{c.Rows, c.KeptCols()}, c.Values)
		}); err != nil {
			return err
		}
		meta := make([]byte, 4*len(c.Metadata()))
		for i, w := range c.Metadata() {
			binary.LittleEndian.PutUint32(meta[4*i:], w)
		}
		if err := writeFile(dir, MetadataFile, func(w io.Writer) error {
			_, err := w.Write(meta[:c.MetadataBytes()])
			return err
		}); err != nil {
			return err
		}
		r.Summary.Files = []string{ValuesFile, MetadataFile}
	}
	if r.Summary.ValidMask {
		if err := writeFile(dir, PrunedFile, func(w io.Writer) error {
			return tensorfile.WriteNPY(w, r.Tensor.Shape, r.Tensor.FromGEMMView(r.Pruned))
		}); err != nil {
			return err
		}
		r.Summary.Files = append(r.Summary.Files, PrunedFile)
	}
	r.Summary.Files = append(r.Summary.Files, SummaryFile)
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Summary); err != nil {
		return fmt.Errorf("prune summary: %w", err)
	}
	return writeFile(dir, SummaryFile, func(w io.Writer) error {
		_, err := w.Write(js.Bytes())
		return err
	})
}

// PruneFiles are the files WriteDir may write, which the command checks
// before anything is read (no link, no input among them).
var PruneFiles = []string{ValuesFile, MetadataFile, PrunedFile, SummaryFile}

// writeFile writes one output file whole (atomicfile: never through a
// link, a kill leaves the old file or the new).
func writeFile(dir, name string, write func(io.Writer) error) error {
	err := atomicfile.WriteWith(filepath.Join(dir, name), func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("prune output %s: %w", name, err)
	}
	return nil
}

// LoadWeights loads the 2:4 weight a trace row points at and checks it
// against the row's m x k: a directory written by `stcsim prune` (its
// metadata is decoded and validated), or a .npy / .safetensors[#NAME]
// tensor that must already be 2:4 sparse along K. K must be a multiple
// of 4.
func LoadWeights(path string, m, k int) (*Weights, error) {
	return loadWeights(path, m, k, tensorcore.Pattern{N: 2, M: 4})
}

// LoadRowWeights loads the weight of a trace row with the row's pattern;
// the file's shape must be the layer's own (unpadded) M x K, and the
// weight is zero-padded to the row's M x K when the row was padded.
func LoadRowWeights(g GEMM) (*Weights, error) {
	p, err := rowPattern(g)
	if err != nil {
		return nil, err
	}
	m, k := g.M, g.K
	if g.UnpaddedM > 0 {
		m = g.UnpaddedM
	}
	if g.UnpaddedK > 0 {
		k = g.UnpaddedK
	}
	w, err := loadWeights(g.Weights, m, k, p)
	if err != nil {
		return nil, fmt.Errorf("row %s: %w", g.Name, err)
	}
	if m == g.M && k == g.K {
		return w, nil
	}
	padded := tensorcore.NewMatrix(g.M, g.K)
	for r := range m {
		copy(padded.Data[r*g.K:r*g.K+k], w.Matrix.Data[r*k:(r+1)*k])
	}
	c, err := tensorcore.Compress(padded, p)
	if err != nil {
		return nil, fmt.Errorf("row %s: pad weights: %w", g.Name, err)
	}
	return &Weights{Path: w.Path, Matrix: padded, Compressed: c}, nil
}

func rowPattern(g GEMM) (tensorcore.Pattern, error) {
	if PatternGroup(g.Sparsity) == 0 {
		return tensorcore.Pattern{}, fmt.Errorf("row %s: sparsity %s has no "+
			"weight mask", g.Name, quote.Q(g.Sparsity))
	}
	return tensorcore.ParsePattern(g.Sparsity)
}

func loadWeights(path string, m, k int, p tensorcore.Pattern) (*Weights, error) {
	if k%p.Group() != 0 {
		return nil, fmt.Errorf("weights %s: K = %d is not a multiple of %d, "+
			"the %s group width", path, k, p.Group(), p)
	}
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		return loadPrunedDir(path, m, k, p)
	}
	if err != nil && filepath.Ext(path) == "" {
		return nil, fmt.Errorf("weights: %w (want a directory written by "+
			"stcsim prune, a .npy or a .safetensors file)", err)
	}
	t, err := ReadTensor(path, "")
	if err != nil {
		return nil, err
	}
	a, err := t.GEMMView()
	if err != nil {
		return nil, fmt.Errorf("weights %s: %w", path, err)
	}
	if a.Rows != m || a.Cols != k {
		return nil, fmt.Errorf("weights %s: shape %v is %dx%d as M x K, the "+
			"trace row wants %dx%d", path, t.Shape, a.Rows, a.Cols, m, k)
	}
	if err := finite(a); err != nil { // as prune refuses it
		return nil, fmt.Errorf("weights %s: %w", path, err)
	}
	c, err := tensorcore.Compress(a, p)
	if err != nil {
		return nil, field.Errorf("weights %s: %w (prune it first: stcsim prune %s %s %s DIR)",
			path, err, FieldPruneInput, path, FieldPruneDir)
	}
	return &Weights{Path: path, Matrix: a, Compressed: c}, nil
}

// loadPrunedDir reads the compressed values and metadata that `stcsim
// prune` wrote.
func loadPrunedDir(dir string, m, k int, p tensorcore.Pattern) (*Weights, error) {
	js, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("weights %s: %w", dir, err)
	}
	var s PruneSummary
	if err := json.Unmarshal(js, &s); err != nil {
		return nil, fmt.Errorf("weights %s: %s: %w", dir, SummaryFile, err)
	}
	if !s.ValidMask {
		return nil, fmt.Errorf("weights %s: its summary says the mask is not "+
			"a valid %s (%s)", dir, s.Pattern, s.InputError)
	}
	if s.Pattern != p.String() {
		return nil, fmt.Errorf("weights %s: pattern %s, the trace row wants %s",
			dir, s.Pattern, p)
	}
	if s.GEMMShape != [2]int{m, k} {
		return nil, fmt.Errorf("weights %s: shape %dx%d as M x K, the trace "+
			"row wants %dx%d", dir, s.GEMMShape[0], s.GEMMShape[1], m, k)
	}
	vf, err := os.Open(filepath.Join(dir, ValuesFile))
	if err != nil {
		return nil, fmt.Errorf("weights %s: %w", dir, err)
	}
	defer vf.Close()
	vals, err := tensorfile.ReadNPY(vf, filepath.Join(dir, ValuesFile))
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	kept := p.Kept(k)
	if len(vals.Shape) != 2 || vals.Shape[0] != m || vals.Shape[1] != kept {
		return nil, fmt.Errorf("weights %s: %s has shape %v, want [%d %d]",
			dir, ValuesFile, vals.Shape, m, kept)
	}
	if err := finite(tensorcore.Matrix{Rows: m, Cols: kept, Data: vals.Data}); err != nil {
		return nil, fmt.Errorf("weights %s: %s: %w", dir, ValuesFile, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("weights %s: %w", dir, err)
	}
	words := make([]uint32, (len(raw)+3)/4)
	for i, b := range raw {
		words[i/4] |= uint32(b) << (8 * (i % 4))
	}
	c, err := tensorcore.FromMetadata(vals.Data, words, m, k, p)
	if err != nil {
		return nil, fmt.Errorf("weights %s: %s: %w", dir, MetadataFile, err)
	}
	if len(raw) != c.MetadataBytes() {
		return nil, fmt.Errorf("weights %s: %s has %d bytes, want %d", dir,
			MetadataFile, len(raw), c.MetadataBytes())
	}
	return &Weights{Path: dir, Matrix: c.Decompress(), Compressed: c}, nil
}

// SyntheticValue is element (r, c) of the synthetic m x k weight of seed:
// uniform in [-1, 1), a pure function of (seed, r*k + c) (splitmix64), so
// any tile of the matrix can be made without the rest.
func SyntheticValue(k int, seed uint64, r, c int) float32 {
	x := seed + uint64(r*k+c+1)*0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float32(x>>40)/(1<<23) - 1
}

// SyntheticWeights is the deterministic dense m x k weight of a seed,
// for rows without a weight file; prune it with tensorcore.PruneMagnitude.
func SyntheticWeights(m, k int, seed uint64) tensorcore.Matrix {
	return SyntheticTile(m, k, seed, 0, 0, m, k)
}

// SyntheticTile is the rows x cols block at (r0, c0) of
// SyntheticWeights(m, k, seed), made without the rest of the matrix.
func SyntheticTile(m, k int, seed uint64, r0, c0, rows, cols int) tensorcore.Matrix {
	t := tensorcore.NewMatrix(rows, cols)
	for r := range rows {
		for c := range cols {
			t.Data[r*cols+c] = SyntheticValue(k, seed, r0+r, c0+c)
		}
	}
	return t
}

// ErrNoWeights is returned by RowWeights for a dense row.
var ErrNoWeights = errors.New("dense row: no sparse weight")

// RowWeights is the sparse weight of a row: the file it names
// (LoadRowWeights), or else the synthetic weight of seed pruned by
// magnitude to the row's pattern. It materialises the whole M x K matrix;
// use SyntheticTile for samples of large layers.
func RowWeights(g GEMM, seed uint64) (*Weights, error) {
	if PatternGroup(g.Sparsity) == 0 {
		return nil, fmt.Errorf("row %s: %w", g.Name, ErrNoWeights)
	}
	if g.Weights != "" {
		return LoadRowWeights(g)
	}
	p, err := rowPattern(g)
	if err != nil {
		return nil, err
	}
	if g.K%p.Group() != 0 {
		return nil, fmt.Errorf("row %s: K = %d is not a multiple of %d, the %s group width",
			g.Name, g.K, p.Group(), p)
	}
	a := tensorcore.PruneMagnitude(SyntheticWeights(g.M, g.K, seed), p)
	c, err := tensorcore.Compress(a, p)
	if err != nil {
		return nil, fmt.Errorf("row %s: %w", g.Name, err)
	}
	return &Weights{Matrix: a, Compressed: c}, nil
}

// tensorPath splits a .safetensors (or an ONNX graph's) path's "#NAME"
// suffix off: the file and the tensor it names ("" without one).
func tensorPath(path string) (file, tensor string) {
	for _, ext := range []string{".safetensors", ".onnx"} {
		if i := strings.LastIndex(path, ext+"#"); i >= 0 {
			return path[:i+len(ext)], path[i+len(ext+"#"):]
		}
	}
	return path, ""
}

// hashFile feeds the bytes of file to h.
func hashFile(h hash.Hash, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open weights: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	return nil
}

// WeightsFiles are the files the weights path of a trace row names: a
// directory written by `stcsim prune`'s summary, values and metadata
// (what loadPrunedDir reads), else the tensor file (less a .safetensors
// path's "#NAME").
func WeightsFiles(path string) []string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return []string{filepath.Join(path, SummaryFile),
			filepath.Join(path, ValuesFile), filepath.Join(path, MetadataFile)}
	}
	file, _ := tensorPath(path)
	return []string{file}
}

// HashWeights is the SHA-256 of what a trace row's weights path names,
// for provenance: each of its WeightsFiles (name, length and bytes, the
// name a pruned directory's file name or a tensor file's tensor name).
func HashWeights(path string) (string, error) {
	h := sha256.New()
	_, tensor := tensorPath(path)
	files := WeightsFiles(path)
	for _, file := range files {
		name := tensor
		if len(files) > 1 {
			name = filepath.Base(file)
		}
		st, err := os.Stat(file)
		if err != nil {
			return "", fmt.Errorf("weights %s: %w", path, err)
		}
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("weights %s: %s is not a regular file", path, file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("weights %s: %w", path, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
