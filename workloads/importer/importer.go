// Package importer turns a model file, an ONNX graph (workloads/onnx) or
// a PyTorch profiler trace (workloads/torchprof), into a GEMM trace:
// it picks the reader by the file's extension and content, builds the
// rows as the built-in models' are (workloads.Rows) and, on request,
// writes the weights an ONNX file carries next to the trace for the
// weights column.
package importer

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/atomicfile"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx"
	"github.com/stcsim/stcsim/workloads/tensorfile"
	"github.com/stcsim/stcsim/workloads/torchprof"
)

// Formats a model file may have.
const (
	FormatONNX    = "onnx"
	FormatProfile = "torch-profiler"
)

// Options steer an import.
type Options struct {
	// Batch sets an ONNX graph's symbolic batch dim (onnx.Options.Batch).
	Batch int
	// Inputs set ONNX graph inputs' dims (NAME=DIMS).
	Inputs    []onnx.Input
	Precision tensorcore.Precision
	PerLayer  bool
	// WeightsDir, when set, receives one .npy per weight the ONNX file
	// carries (export_params=True); rows whose weight is already in the
	// precision's N:M pattern along K name it in their weights column.
	WeightsDir string
	// Attach, for a run that imports the graph itself: rows whose weight
	// is already in the precision's N:M pattern along K name it as
	// "FILE.onnx#LAYER", held in memory for the process
	// (workloads.RegisterModelTensor), so that the 2:4 check and
	// dual-side masks read the model's own weights.
	Attach bool
}

// Format is the model-file format of path ("" for a trace file): .onnx,
// or a .json whose content is a profiler trace rather than a stcsim
// trace (data is the file's bytes, read by the caller; nil reads none
// and takes any .json for a trace).
func Format(path string, data []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".onnx":
		return FormatONNX
	case ".json":
		if data != nil && torchprof.IsProfile(data) {
			return FormatProfile
		}
	}
	return ""
}

// IsModelFile tells whether path names a model file the importers read
// (it reads a .json file to tell a profiler trace from a stcsim trace).
func IsModelFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".onnx":
		return true
	case ".json":
		data, err := configs.ReadRegular(path, torchprof.MaxProfileBytes, "a JSON file")
		return err == nil && torchprof.IsProfile(data)
	}
	return false
}

// Imported is a model file made a trace.
type Imported struct {
	Trace  *workloads.Trace
	SHA256 string // of the file's bytes
	Import *workloads.Import
}

// Load imports the model file at path. Nothing is written (WeightsDir)
// unless the whole import succeeds.
func Load(path string, o Options) (*Imported, error) {
	limit := int64(onnx.MaxModelBytes)
	if strings.ToLower(filepath.Ext(path)) == ".json" {
		limit = torchprof.MaxProfileBytes
	}
	data, err := configs.ReadRegular(path, limit, "a model file")
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	format := Format(path, data)
	imp := &workloads.Import{Format: format}
	var layers []workloads.ImportedLayer
	var weights map[int]*workloads.Tensor
	switch format {
	case FormatONNX:
		r, err := onnx.Import(data, path, onnx.Options{Batch: o.Batch, Inputs: o.Inputs})
		if err != nil {
			return nil, err
		}
		imp.Importer, imp.Inputs, imp.Skipped = onnx.Importer, r.Inputs, r.Skipped
		layers, weights = r.Layers, r.Weights
		switch {
		case len(weights) == 0:
			imp.Skipped = append(imp.Skipped, "weights: the file carries no weight data "+
				"(export_params=False): sparse rows use the generated pattern")
		case o.WeightsDir == "" && !o.Attach:
			imp.Skipped = append(imp.Skipped, fmt.Sprintf("weights: the file carries %d "+
				"GEMM weights, not attached (stcsim trace import --weights-out DIR writes them "+
				"for the weights column): sparse rows use the generated pattern", len(weights)))
		}
	case FormatProfile:
		if o.Batch > 0 || len(o.Inputs) > 0 {
			return nil, field.Errorf("import %s: %s and %s set an ONNX graph's dims; "+
				"a profiler trace records the shapes it ran", path, onnx.FieldBatch, onnx.FieldInputs)
		}
		if o.WeightsDir != "" {
			return nil, fmt.Errorf("import %s: %w", path,
				weightsDirError(errors.New("a profiler trace carries no weights")))
		}
		r, err := torchprof.Import(data, path)
		if err != nil {
			return nil, err
		}
		imp.Importer, imp.Skipped = torchprof.Importer, r.Skipped
		layers = r.Layers
	default:
		return nil, fmt.Errorf("import %s: not a model file (want .onnx, or a .json "+
			"PyTorch profiler trace with \"traceEvents\")", path)
	}
	if !o.Precision.Valid() {
		return nil, fmt.Errorf("import %s: unknown precision %v", path, o.Precision)
	}
	var files []weightFile
	if o.WeightsDir != "" || o.Attach {
		files, err = attachWeights(path, layers, weights, o, imp)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", path, err)
		}
	}
	name := quote.Text(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	t := &workloads.Trace{Name: name, GEMMs: workloads.Rows(layers, o.Precision, o.PerLayer)}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	if err := writeWeights(o.WeightsDir, path, files); err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	if err := workloads.CheckWeights(t); err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	return &Imported{Trace: t, SHA256: hex.EncodeToString(sum[:]), Import: imp}, nil
}

type weightFile struct {
	path   string
	tensor *workloads.Tensor
}

// attachWeights names a file in o.WeightsDir for every weight (or, with
// o.Attach, a "model#LAYER" reference to it in memory) and, for those
// already in the precision's pattern along K, sets the layer's Weights.
func attachWeights(model string, layers []workloads.ImportedLayer, weights map[int]*workloads.Tensor,
	o Options, imp *workloads.Import) ([]weightFile, error) {
	pattern, err := tensorcore.ParsePattern(workloads.SparsityFor(o.Precision))
	if err != nil {
		return nil, err
	}
	var idx []int
	for i := range weights {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var files []weightFile
	used := map[string]bool{}
	for _, i := range idx {
		w := weights[i]
		if !layers[i].Prunable || !workloads.ASPEligible(layers[i].Out, layers[i].In) {
			continue // a dense row: its weight has no mask to give
		}
		base := fileName(layers[i].Name)
		for k := 1; used[base]; k++ {
			base = fmt.Sprintf("%s_%d", fileName(layers[i].Name), k)
		}
		used[base] = true
		path := model + "#" + base
		if o.WeightsDir != "" {
			path = filepath.Join(o.WeightsDir, base+".npy")
			files = append(files, weightFile{path, w})
		}
		m, err := w.GEMMView()
		if err != nil {
			return nil, fmt.Errorf("weight of %s: %w", layers[i].Name, err)
		}
		if m.Cols%pattern.Group() != 0 || tensorcore.CheckPattern(m, pattern) != nil {
			if o.WeightsDir == "" {
				imp.Skipped = append(imp.Skipped, fmt.Sprintf("weights of %s are not %s along K: "+
					"its sparse row uses the generated pattern (stcsim trace import "+
					"--weights-out DIR writes the weights for stcsim prune)", layers[i].Name, pattern))
				continue
			}
			imp.Skipped = append(imp.Skipped, fmt.Sprintf("weights of %s are not %s along K: "+
				"written to %s without a mask (stcsim prune --in %s --out DIR prunes them; "+
				"name DIR in the row's weights column)", layers[i].Name, pattern, path, path))
			continue
		}
		if o.WeightsDir == "" {
			workloads.RegisterModelTensor(path, w)
		}
		layers[i].Weights = path
	}
	return files, nil
}

// fileName makes a layer name a file name.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// weightsDirError is err, a problem with Options.WeightsDir, naming it.
func weightsDirError(err error) error {
	return &field.Error{Field: workloads.FieldWeightsDir, Err: err}
}

// writeWeights writes the weight files (float32 .npy) into dir, each
// whole (atomicfile: a kill or a full disk leaves the old file or the
// new one), after checking that none is a link or the model file itself.
func writeWeights(dir, model string, files []weightFile) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return weightsDirError(err)
	}
	in, _ := os.Stat(model)
	for _, f := range files {
		st, err := os.Lstat(f.path)
		switch {
		case err != nil:
		case st.Mode()&fs.ModeSymlink != 0:
			return weightsDirError(fmt.Errorf("%s: %w", f.path, atomicfile.ErrSymlink))
		case !st.Mode().IsRegular():
			return weightsDirError(fmt.Errorf("%s: exists and is not a regular file", f.path))
		case in != nil && os.SameFile(st, in):
			return weightsDirError(fmt.Errorf("%s: is the model file being imported", f.path))
		}
	}
	for _, f := range files {
		if err := atomicfile.WriteWith(f.path, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			if err := tensorfile.WriteNPY(bw, f.tensor.Shape, f.tensor.Data); err != nil {
				return err
			}
			return bw.Flush()
		}); err != nil {
			return weightsDirError(err)
		}
	}
	return nil
}
