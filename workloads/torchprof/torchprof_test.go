package torchprof

import (
	"os"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func load(t *testing.T, file string) *Result {
	t.Helper()
	data, err := os.ReadFile("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	if !IsProfile(data) {
		t.Fatalf("%s: not recognised as a profile", file)
	}
	r, err := Import(data, file)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type shape struct {
	m, n, k, batch, count int
	sparsity              string
}

func shapes(rows []workloads.GEMM) []shape {
	var out []shape
	for _, g := range rows {
		out = append(out, shape{g.M, g.N, g.K, g.Batch, g.Count, g.Sparsity})
	}
	return out
}

// TestEncoderProfileMatchesBuiltInBERTBase: the fixture profiles the
// 12-layer encoder at batch 2, sequence 128.
func TestEncoderProfileMatchesBuiltInBERTBase(t *testing.T) {
	r := load(t, "encoder-profile.json")
	rows := workloads.Rows(r.Layers, tensorcore.FP16, false)
	for _, g := range rows {
		t.Logf("%s %dx%dx%d b%d c%d %s", g.Name, g.M, g.N, g.K, g.Batch, g.Count, g.Sparsity)
	}
	want, err := workloads.Build("bert-base", workloads.Options{Batch: 2, Seq: 128})
	if err != nil {
		t.Fatal(err)
	}
	gs, ws := shapes(rows), shapes(want.GEMMs[:len(want.GEMMs)-1])
	if len(gs) != len(ws) {
		t.Fatalf("got %v\nwant %v", gs, ws)
	}
	for i := range gs {
		if gs[i] != ws[i] {
			t.Errorf("row %d %s: got %+v, want %+v (%s)", i, rows[i].Name, gs[i], ws[i], want.GEMMs[i].Name)
		}
	}
	if len(r.Skipped) != 0 {
		t.Errorf("skipped %v", r.Skipped)
	}
}
