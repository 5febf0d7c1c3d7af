package onnx

import (
	"os"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// FuzzImport: no input panics or hangs, every error is bounded (400
// bytes, no raw control character) and names the file, and an accepted
// graph gives layers that make valid trace rows. Seeded with issue 51's
// crash models; FuzzImportStructured builds valid models instead.
//
//	go test ./workloads/onnx -run '^$' -fuzz '^FuzzImport$' -fuzztime 20000x -parallel 1
func FuzzImport(f *testing.F) {
	f.Add(mlp(f), 8)
	f.Add(mlp(f, node("/post/Frobnicate", "Frobnicate", []string{"y"}, []string{"z"})), 1)
	if r50, err := os.ReadFile("../testdata/resnet50.onnx"); err == nil {
		f.Add(r50, 2)
		f.Add(r50[:len(r50)/3], 2)
	}
	f.Add([]byte("\x08\x08:\x02\n\x00"), 0)
	f.Add(read(f, sliceStepModel), 0)
	f.Add(read(f, reshapeRankModel), 0)
	f.Fuzz(func(t *testing.T, data []byte, batch int) {
		checkImport(t, data, batch)
		r, err := Import(data, "f.onnx", Options{Batch: batch % 64})
		if err != nil {
			return
		}
		tr := &workloads.Trace{Name: "f", GEMMs: workloads.Rows(r.Layers, tensorcore.FP16, false)}
		_ = tr.Validate() // may refuse a huge product; must not panic
	})
}
