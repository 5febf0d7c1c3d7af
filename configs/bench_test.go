package configs

import "testing"

// BenchmarkLoadWithSet is the cost of one sweep point's config: the
// default config with one override, loaded and validated.
func BenchmarkLoadWithSet(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Load(nil, []string{"gpu.sm_count=54"}); err != nil {
			b.Fatal(err)
		}
	}
}
