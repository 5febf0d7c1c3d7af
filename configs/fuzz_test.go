package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// setSeeds are --set overrides, among them every one that once panicked
// or changed a value silently (issue 13 items 1, 2, 12, 15, 20).
var setSeeds = []string{
	"gpu.sm_count=54", "gpu.sm_count.x=1", "name.x=1", "kernel.split_k.x=1",
	"gpu.sm_count.=1", "description=caf\xe9", "kernel.candidates[0][1].stages=4",
	"kernel.candidates[0].stages=4", "gpu.clock_mhz=1.5", "gpu.sm_count=054",
	"dram.bandwidth_gbps=.inf", "kernel.split_k=[1, 2]", "l2={ways: 8}",
	"=", "a", "gpu.sm_count=1\n---\n2",
}

// FuzzSet: no override panics or loads an invalid config, and an error
// stays short (it quotes a few bytes of the value, not all of it).
func FuzzSet(f *testing.F) {
	for _, s := range setSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		ld, err := Load(nil, []string{set})
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if errs := ld.Config.Validate(); len(errs) > 0 {
			t.Fatalf("accepted an invalid config: %v", errs)
		}
	})
}

// fileSeeds are config files, among them every kind that once panicked,
// hung or was misread (items 7, 12, 13, 17).
var fileSeeds = []string{
	"base: a100-40gb\ngpu:\n  sm_count: 54\n",
	"base: a100-40gb\ngpu:\n  sm_count: 54\n  sm_count: 27\n",
	"base: a100-40gb\nbase: a100-80gb\n",
	"base: a100-40gb\n---\ngpu: {sm_count: 2}\n",
	"base: a100-40gb\ngpu:\n  clock_mhz: 1410.7\n  sm_count: 054\n",
	"base: a100-40gb\ndram:\n  bandwidth_gbps: .inf\n",
	"base: /dev/urandom\n", "base: /dev/zero\n", "base: /etc/passwd\n",
	"base: a100-40gb\nkernel:\n  candidates: &a [*a]\n",
	"base: {x: 1}\n", "gpu: [\n", "\x00\x01", "",
}

// FuzzConfigFile: no file panics; an accepted one round-trips: its
// effective YAML loads again to the same config.
func FuzzConfigFile(f *testing.F) {
	for _, s := range fileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "gpu.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ld, err := Load([]string{p}, nil)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		back := filepath.Join(dir, "effective.yaml")
		if err := os.WriteFile(back, ld.YAML(), 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := Load([]string{back}, nil)
		if err != nil {
			t.Fatalf("effective config does not load: %v\n%s", err, ld.YAML())
		}
		if !reflect.DeepEqual(again.Config, ld.Config) {
			t.Fatalf("round trip differs")
		}
	})
}

// TestFuzzSeedsInCorpus keeps the seeds above in testdata/fuzz, so that
// `go test` replays them even without -fuzz.
func TestFuzzSeedsInCorpus(t *testing.T) {
	for target, seeds := range map[string][]string{"FuzzSet": setSeeds,
		"FuzzConfigFile": fileSeeds} {
		entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", target))
		if err != nil {
			t.Fatal(err)
		}
		var corpus strings.Builder
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join("testdata", "fuzz", target, e.Name()))
			corpus.Write(b)
		}
		for _, s := range seeds {
			if !strings.Contains(corpus.String(), "string("+goQuote(s)+")") {
				t.Errorf("%s: seed %q not in testdata/fuzz", target, s)
			}
		}
	}
}
