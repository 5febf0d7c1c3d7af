package importer

import (
	"testing"

	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx"
)

// An ONNX import carries every GEMM's shapes, so a training step is made
// from it like from a built-in model: three GEMMs per forward row, the
// step's multiply-adds three times the forward's; the import records
// its format, which CheckPass lets through.
func TestONNXImportTrainingStep(t *testing.T) {
	im, err := Load("../testdata/encoder.onnx",
		Options{Inputs: []onnx.Input{{Name: "input", Dims: []int64{2, 128, 768}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := workloads.Training{Pass: workloads.PassStep, Transposable: true}
	if err := o.CheckPass(im.Trace.Name, im.Import.Format); err != nil {
		t.Fatalf("ONNX import refused: %v", err)
	}
	st, err := im.Trace.Training(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GEMMs) != 3*len(im.Trace.GEMMs) || st.UsefulMACs() != 3*im.Trace.UsefulMACs() {
		t.Errorf("%d rows, %d MACs from %d rows, %d MACs", len(st.GEMMs), st.UsefulMACs(),
			len(im.Trace.GEMMs), im.Trace.UsefulMACs())
	}
	sparseDX := 0
	for _, g := range st.GEMMs {
		if g.Pass == workloads.RoleDgrad && g.Sparsity != workloads.Dense {
			sparseDX++
		}
	}
	if sparseDX == 0 {
		t.Error("no data gradient of the encoder runs sparse with a transposable mask")
	}
}
