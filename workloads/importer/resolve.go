package importer

import (
	"fmt"
	"os"
	"strings"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx"
)

// Resolve resolves a workload named on the command line: a model name, a model file
// (an ONNX graph or a profiler trace, imported with the run's batch as
// the graph's symbolic batch dim and inputs as its inputs' dims, as
// the importer's Options.Batch and Inputs) or a trace file, with the
// SHA-256 of its bytes ("" for a model) and how a model file was imported.
func Resolve(name string, batch, seq int, inputs []onnx.Input) (*workloads.Trace, string, *workloads.Import, error) {
	for _, m := range workloads.Models() {
		if m == name {
			t, err := workloads.Model(name, batch, seq)
			return t, "", nil, err
		}
	}
	if _, err := os.Stat(name); err != nil {
		return nil, "", nil, &field.Error{Field: workloads.FieldWorkload, Value: quote.Q(name),
			Err: fmt.Errorf("not a model (%s) and not a readable trace file", strings.Join(workloads.Models(), ", "))}
	}
	if IsModelFile(name) {
		o := Options{Attach: true} // the graph's 2:4 weights, in memory
		if Format(name, nil) == FormatONNX {
			o.Batch, o.Inputs = batch, inputs
		}
		im, err := Load(name, o)
		if err != nil {
			return nil, "", nil, err
		}
		return im.Trace, im.SHA256, im.Import, nil
	}
	t, sum, err := workloads.LoadSHA256(name)
	return t, sum, nil, err
}
