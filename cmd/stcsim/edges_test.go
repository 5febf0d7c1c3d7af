package main

import (
	"strings"
	"testing"
)

// A row whose pattern no datapath runs (3:4 on fp16) is named by its
// file and line, in a CSV and a JSON trace, by run and by trace check.
func TestBadPatternNamesTheLine(t *testing.T) {
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "bad.csv", "name,m,n,k,batch,precision,sparsity,count\n"+
		"l1,1024,1024,1024,1,fp16,2:4,1\nl2,1024,1024,1024,1,fp16,3:4,1\n")
	jsonPath := writeFile(t, dir, "bad.json", "{\"gemms\": [\n"+
		"  {\"name\": \"l1\", \"m\": 1024, \"n\": 1024, \"k\": 1024, \"batch\": 1, \"precision\": \"fp16\", \"sparsity\": \"2:4\", \"count\": 1},\n"+
		"  {\"name\": \"l2\", \"m\": 1024, \"n\": 1024, \"k\": 1024, \"batch\": 1, \"precision\": \"fp16\", \"sparsity\": \"3:4\", \"count\": 1}\n]}\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--workload", csvPath, "--quiet"}, csvPath + `:3: layer l2: sparsity 3:4`},
		{[]string{"run", "--workload", jsonPath, "--quiet"}, jsonPath + `:3: layer l2: sparsity 3:4`},
		{[]string{"trace", "check", csvPath}, "stcsim trace check: " + csvPath + `:3: layer l2`},
	} {
		out, se, code := capture(t, func() int { return dispatch(c.args) })
		if code != exitUsage || out != "" || !strings.Contains(se, c.want) {
			t.Errorf("%v: exit %d, stdout %.80q, stderr %q; want exit 2 and %q", c.args, code, out, se, c.want)
		}
	}
}

// A typo in a sweep's grid key is named by its line.
func TestSweepGridTypoNamesTheLine(t *testing.T) {
	path := writeFile(t, t.TempDir(), "typo.yaml", "name: typo\nconfigs: [a100-40gb]\nworkloads:\n  - name: g\n"+
		"    gemms: [1024x1024x1024]\ngrid:\n  dram.bandwidth_gbps: [400, 1000]\n"+
		"  tensorcore.fp16.sparse_patern: [\"2:4\", \"2:8\"]\n")
	out, se, code := capture(t, func() int { return dispatch([]string{"sweep", path, "--dry-run"}) })
	if code != exitUsage || out != "" ||
		!strings.Contains(se, "line 8: grid key tensorcore.fp16.sparse_patern:") {
		t.Errorf("exit %d, stdout %.80q, stderr %q; want exit 2 and the grid key's line", code, out, se)
	}
}

// trace check gives a small trace's MACs with a prefix that shows them,
// not "0.000 G".
func TestTraceCheckUnits(t *testing.T) {
	path := writeFile(t, t.TempDir(), "small.csv", "name,m,n,k,batch,precision,sparsity,count\nl1,16,16,16,1,fp16,2:4,1\n")
	out, se, code := capture(t, func() int { return dispatch([]string{"trace", "check", path}) })
	if code != exitOK || !strings.Contains(out, "4.1 k MACs per pass") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 4.1 k MACs (16^3)", code, out, se)
	}
	if got := siCount(4_831_838_208); got != "4.83 G" {
		t.Errorf("siCount = %q", got)
	}
}
