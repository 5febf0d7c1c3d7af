package torchprof

import (
	"os"
	"testing"
)

// BenchmarkImport: parse the encoder's profile (888 events).
//
//	go test ./workloads/torchprof -run XXX -bench . -benchtime 200ms
func BenchmarkImport(b *testing.B) {
	data, err := os.ReadFile("../testdata/encoder-profile.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Import(data, "encoder-profile.json"); err != nil {
			b.Fatal(err)
		}
	}
}
