package onnx

import (
	"os"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// FuzzImport: no input panics or hangs, every error is bounded, and an
// accepted graph gives layers that make valid trace rows.
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
	f.Fuzz(func(t *testing.T, data []byte, batch int) {
		r, err := Import(data, "f.onnx", Options{Batch: batch % 64})
		if err != nil {
			if len(err.Error()) > 1024 {
				t.Fatalf("a %d-byte message", len(err.Error()))
			}
			return
		}
		tr := &workloads.Trace{Name: "f", GEMMs: workloads.Rows(r.Layers, tensorcore.FP16, false)}
		for _, l := range r.Layers {
			if l.M < 1 || l.N < 1 || l.K < 1 || l.M > workloads.MaxDim || l.N > workloads.MaxDim || l.K > workloads.MaxDim {
				t.Fatalf("layer %+v out of bounds", l)
			}
		}
		_ = tr.Validate() // may refuse a huge product; must not panic
	})
}
