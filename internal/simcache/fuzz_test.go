package simcache

import (
	"bytes"
	"os"
	"testing"
)

// FuzzEntry writes arbitrary bytes as an entry and reads it: no panic,
// every warning bounded, and a hit only for bytes that are exactly what
// Put writes for the payload returned (the MAC under this cache's secret).
// Run: go test ./internal/simcache -run '^$' -fuzz FuzzEntry -fuzztime 60s
func FuzzEntry(f *testing.F) {
	dir := f.TempDir()
	c, err := Open(dir, 0)
	if err != nil {
		f.Fatal(err)
	}
	k := key("fuzz")
	valid := c.encode(k, []byte(`{"record":{"cycles":1}}`))
	for _, seed := range [][]byte{valid, valid[:len(valid)-1], nil, []byte(magic),
		[]byte(magic + "zz\n"), bytes.Replace(valid, []byte("1"), []byte("2"), 1),
		append([]byte("stcsim-cache-v1\n"), valid[len(magic):]...)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var warnings []string
		c.Warn = func(s string) { warnings = append(warnings, s) }
		if err := os.WriteFile(c.path(k), data, 0o644); err != nil {
			t.Skip(err)
		}
		got, why := c.Get(k, nil)
		if why == Hit && !bytes.Equal(data, c.encode(k, got)) {
			t.Fatalf("served %q from an entry Put would not write", got)
		}
		if why != Hit && why != MissRefused {
			t.Fatalf("an entry that is there: %q", why)
		}
		for _, w := range warnings {
			if len(w) > 400 {
				t.Fatalf("a %d-byte warning", len(w))
			}
		}
	})
}
