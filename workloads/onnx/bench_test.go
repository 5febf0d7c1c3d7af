package onnx

import (
	"os"
	"testing"
)

// BenchmarkImport: decode and shape-propagate the fixtures.
//
//	go test ./workloads/onnx -run XXX -bench . -benchtime 200ms
func BenchmarkImport(b *testing.B) {
	for _, c := range []struct {
		file string
		o    Options
	}{
		{"resnet50.onnx", Options{Batch: 32}},
		{"encoder.onnx", Options{Inputs: []Input{{"input", []int64{32, 128, 768}}}}},
	} {
		data, err := os.ReadFile("../testdata/" + c.file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.file, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Import(data, c.file, c.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
