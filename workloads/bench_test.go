package workloads

import (
	"bytes"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

func BenchmarkBuild(b *testing.B) {
	for _, name := range []string{"resnet50", "bert-large"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Build(name, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseCSV parses ResNet-101's per-layer trace (105 rows).
func BenchmarkParseCSV(b *testing.B) {
	tr, err := Build("resnet101", Options{PerLayer: true})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	tr.WriteCSV(&buf)
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := ParseCSV(bytes.NewReader(buf.Bytes()), "r101.csv"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrune prunes and compresses a 1024 x 1024 weight 2:4.
func BenchmarkPrune(b *testing.B) {
	t := &Tensor{Shape: []int{1024, 1024}, Data: SyntheticWeights(1024, 1024, 1).Data}
	for b.Loop() {
		if _, err := Prune(t, "bench", tensorcore.Pattern{N: 2, M: 4}, false); err != nil {
			b.Fatal(err)
		}
	}
}
