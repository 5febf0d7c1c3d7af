package onnx

import (
	"os"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func load(t *testing.T, file string, o Options) *Result {
	t.Helper()
	data, err := os.ReadFile("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Import(data, file, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// shape is a row without its name and note: what the GEMM is.
type shape struct {
	m, n, k, batch, count int
	sparsity              string
	um, uk                int
}

func shapes(rows []workloads.GEMM) []shape {
	var out []shape
	for _, g := range rows {
		out = append(out, shape{g.M, g.N, g.K, g.Batch, g.Count, g.Sparsity, g.UnpaddedM, g.UnpaddedK})
	}
	return out
}

func same(t *testing.T, got, want []workloads.GEMM) {
	t.Helper()
	gs, ws := shapes(got), shapes(want)
	if len(gs) != len(ws) {
		t.Fatalf("%d rows, want %d:\n got %v\nwant %v", len(gs), len(ws), gs, ws)
	}
	for i := range gs {
		if gs[i] != ws[i] {
			t.Errorf("row %d (%s vs built-in %s): got %+v, want %+v", i, got[i].Name, want[i].Name, gs[i], ws[i])
		}
	}
}

func TestResNet50MatchesBuiltIn(t *testing.T) {
	for _, batch := range []int{1, 32} {
		r := load(t, "resnet50.onnx", Options{Batch: batch})
		rows := workloads.Rows(r.Layers, tensorcore.FP16, false)
		want, err := workloads.Build("resnet50", workloads.Options{Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		same(t, rows, want.GEMMs)
		if batch == 32 {
			for _, g := range rows {
				t.Logf("%s %dx%dx%d b%d c%d %s", g.Name, g.M, g.N, g.K, g.Batch, g.Count, g.Sparsity)
			}
			t.Log(r.Inputs, r.Skipped)
		}
	}
}

func TestEncoderMatchesBuiltInBERTBase(t *testing.T) {
	r := load(t, "encoder.onnx", Options{Inputs: []Input{{"input", []int64{32, 128, 768}}}})
	rows := workloads.Rows(r.Layers, tensorcore.FP16, false)
	want, err := workloads.Build("bert-base", workloads.Options{Batch: 32, Seq: 128})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rows {
		t.Logf("%s %dx%dx%d b%d c%d %s", g.Name, g.M, g.N, g.K, g.Batch, g.Count, g.Sparsity)
	}
	t.Log(r.Inputs, r.Skipped)
	same(t, rows, want.GEMMs[:len(want.GEMMs)-1]) // the encoder has no pooler
}
