package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every bad override is an error naming the override, never a panic
// (issue 13 items 1, 2, 7, 12, 15, 20).
func TestBadSetsAreErrors(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"gpu.sm_count.x=1", "has no keys below it"},
		{"name.x=1", "has no keys below it"},
		{"kernel.split_k.x=1", "has no keys below it"},
		{"gpu.sm_count.=1", "empty key name"},
		{".gpu=1", "empty key name"},
		{"kernel.candidates[0][1].stages=4", "one [i]"},
		{"kernel.candidates[x].stages=4", "one [i]"},
		{"kernel.candidates[-1].stages=4", "one [i]"},
		{"description=caf\xe9", "not UTF-8"},
		{"gpu.clock_mhz=1.5", "decimal digits"},
		{"gpu.sm_count=054", "decimal digits"},
		{"gpu.sm_count=0x10", "decimal digits"},
		{"gpu.sm_count=1e2", "decimal digits"},
		{"dram.bandwidth_gbps=.inf", "finite"},
		{"dram.bandwidth_gbps=.nan", "finite"},
		{"dram.bandwidth_gbps=1e-6", "must be in [1, 1000000]"},
		{"gpu.clock_mhz=1000000000000", "must be in [100, 10000]"},
		{"gpu.sm_count=100000", "must be in [1, 1024]"},
		{"base=a100-80gb", "--config"},
		{"gpu={sm_count: 1, sm_count: 2}", "repeated"},
		{"shared_memory.bytes_per_clk=256", "exceeds what the banks serve"},
	} {
		_, err := Load(nil, []string{c.set})
		if err == nil {
			t.Errorf("--set %q: loaded", c.set)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %q: %v; want it to say %q", c.set, err, c.want)
		}
	}
}

// The value simulated is the value written: a valid integer stays exact.
func TestSetIntegerIsExact(t *testing.T) {
	ld, err := Load(nil, []string{"gpu.sm_count=54", "dram.bandwidth_gbps=1555.5"})
	if err != nil {
		t.Fatal(err)
	}
	if ld.Config.GPU.SMCount != 54 || ld.Config.Memory.DRAM.BandwidthGBps != 1555.5 {
		t.Errorf("got sm_count %d, bandwidth %g", ld.Config.GPU.SMCount,
			ld.Config.Memory.DRAM.BandwidthGBps)
	}
}

// Files: duplicate keys, a repeated base, several documents and
// fractional or octal integers are errors with the file and the line of
// the offending key (items 12, 13).
func TestBadFilesNameFileAndLine(t *testing.T) {
	for name, c := range map[string]struct{ text, want string }{
		"duplicate key":     {"base: a100-40gb\ngpu:\n  sm_count: 54\n  sm_count: 27\n", "gpu.yaml:4: key gpu.sm_count repeated (first at line 3)"},
		"repeated base":     {"base: a100-40gb\nbase: a100-80gb\n", "gpu.yaml:2: key base repeated"},
		"two documents":     {"base: a100-40gb\n---\ngpu: {sm_count: 2}\n", "gpu.yaml:3: a second YAML document"},
		"fraction":          {"base: a100-40gb\ngpu:\n  clock_mhz: 1410.7\n", "gpu.yaml:3: key gpu.clock_mhz: want a whole number"},
		"octal":             {"base: a100-40gb\ngpu:\n  sm_count: 054\n", "gpu.yaml:3: key gpu.sm_count: want a whole number"},
		"infinite":          {"base: a100-40gb\ndram:\n  bandwidth_gbps: .inf\n", "gpu.yaml:3: key dram.bandwidth_gbps: want a finite number"},
		"binary":            {"base: a100-40gb\x00\x01\n", "not a YAML file"},
		"not a mapping":     {"just some text\n", "not a YAML mapping"},
		"empty base":        {"base: {}\n", "want a string"},
		"base to nowhere":   {"base: nowhere/at/all.yaml\n", "not a readable file"},
		"syntax":            {"base: a100-40gb\ngpu:\n  sm_count: 4\n   clock_mhz: 1410\n", "gpu.yaml:4: YAML syntax: mapping values are not allowed"},
		"duplicate in full": {func() string { b, _ := BuiltinSource("a100-40gb"); return string(b) + "gpu:\n  sm_count: 1\n" }(), "key gpu repeated"},
	} {
		_, err := Load([]string{writeConfig(t, c.text)}, nil)
		if err == nil {
			t.Errorf("%s: loaded", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to say %q", name, err, c.want)
		}
	}
}

// A base naming a file that is not a config quotes none of it, and no
// error quotes more than a few bytes of a value (item 17).
func TestErrorsQuoteFewBytes(t *testing.T) {
	secret := strings.Repeat("root:x:0:0:root:/root:/bin/bash\n", 20)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "passwd"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "gpu.yaml")
	os.WriteFile(cfg, []byte("base: passwd\n"), 0o644)
	long := "base: a100-40gb\nname: [" + strings.Repeat("x", 500) + "]\n"
	for _, spec := range []string{cfg, writeConfig(t, long)} {
		_, err := Load([]string{spec}, nil)
		if err == nil {
			t.Fatalf("%s: loaded", spec)
		}
		if strings.Contains(err.Error(), "/bin/bash") || strings.Contains(err.Error(), strings.Repeat("x", 60)) {
			t.Errorf("error quotes the content: %v", err)
		}
	}
	_, err := Load(nil, []string{"name=" + strings.Repeat("y", 500) + "\xff"})
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("long --set quoted at length: %v", err)
	}
}

// Only regular files of bounded size are read (item 7).
func TestConfigFileKinds(t *testing.T) {
	big := writeConfig(t, "base: a100-40gb\n#"+strings.Repeat("x", MaxFileBytes)+"\n")
	for _, c := range []struct{ spec, want string }{
		{"/dev/zero", "not a regular file"},
		{t.TempDir(), "not a regular file"},
		{big, "above the limit"},
	} {
		_, err := Load([]string{c.spec}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.spec, err, c.want)
		}
	}
	base := writeConfig(t, "base: /dev/urandom\n")
	if _, err := Load([]string{base}, nil); err == nil ||
		!strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("base: /dev/urandom: %v", err)
	}
}

// Every built-in config is inside every bound, and every bound is
// documented (item 7).
func TestBoundsHoldAndAreDocumented(t *testing.T) {
	for _, name := range Builtin() {
		if _, err := Load([]string{name}, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	doc, err := os.ReadFile("../docs/input-limits.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Bounds {
		if !strings.Contains(string(doc), "`"+b.Key+"`") {
			t.Errorf("bound of %s is not in docs/input-limits.md", b.Key)
		}
	}
}
