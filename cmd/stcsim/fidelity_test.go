package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/fast"
	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/tensorcore"
)

// tinyFastSweep is a three-point fast sweep on a 4-SM GPU whose points
// differ in sparse speedup (the B operand width).
const tinyFastSweep = "workloads: [{name: tiny, gemms: [256x256x512, 512x256x256]}]\n" +
	"set: [sim.fidelity=fast, gpu.sm_count=4]\n" +
	"grid: {tensorcore.fp16.b_operand_bytes_per_clk: [16, 32, 64]}\n"

// A bad --refine stops the sweep before anything runs: no store appears.
func TestRefineRejectsBadN(t *testing.T) {
	dir := t.TempDir()
	fastSpec := writeFile(t, dir, "fast.yaml", tinyFastSweep)
	instrSpec := writeFile(t, dir, "instr.yaml", strings.Replace(tinyFastSweep, "sim.fidelity=fast, ", "", 1))
	for name, args := range map[string][]string{
		"negative":        {fastSpec, "--refine", "-1"},
		"not an integer":  {fastSpec, "--refine", "1.5"},
		"above points":    {fastSpec, "--refine", "4"},
		"not fast":        {instrSpec, "--refine", "1"},
		"with --shard":    {fastSpec, "--refine", "1", "--shard", "1/2"},
		"not a number at": {fastSpec, "--refine", "two"},
	} {
		db := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".db")
		_, errOut, code := capture(t, func() int {
			return dispatch(append([]string{"sweep", "--db", db, "--quiet", "--no-cache"}, args...))
		})
		if code != exitUsage || !strings.Contains(errOut, "refine") {
			t.Errorf("%s: exit %d, stderr %q: want %d naming --refine", name, code, errOut, exitUsage)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%s: the store was created", name)
		}
	}
}

// sweep --refine N re-runs the N best fast points (by sparse speedup) at
// instruction level as points of their own, and says how each moved.
func TestRefineReRunsTheBestPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	dir := t.TempDir()
	spec := writeFile(t, dir, "tiny.yaml", tinyFastSweep)
	db := filepath.Join(dir, "tiny.db")
	out, errOut, code := capture(t, func() int {
		return dispatch([]string{"sweep", spec, "--db", db, "--refine", "2", "--quiet", "--no-cache", "--jobs", "1"})
	})
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	totals, err := st.Totals()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows()
	if err != nil {
		t.Fatal(err)
	}
	// The fast points' speedups, by B width; the refined points' too.
	fastSp, instrSp := map[string]float64{}, map[string]float64{}
	for _, tr := range totals {
		if tr.Mode != tensorcore.Sparse {
			continue
		}
		w, _ := point.GridValue(tr.Grid, "tensorcore.fp16.b_operand_bytes_per_clk")
		if f, ok := point.GridValue(tr.Grid, point.FidelityKey); ok && f == configs.FidelityInstruction {
			instrSp[w] = tr.Speedup
		} else {
			fastSp[w] = tr.Speedup
		}
	}
	if len(fastSp) != 3 || len(instrSp) != 2 {
		t.Fatalf("fast points %v, refined %v: want 3 and 2", fastSp, instrSp)
	}
	// The two refined are the two best fast ones: the worst is not among them.
	worst := ""
	for w, s := range fastSp {
		if worst == "" || s < fastSp[worst] {
			worst = w
		}
	}
	if _, ok := instrSp[worst]; ok {
		t.Errorf("the worst fast point (%s B/clk, %.3f) was refined; fast %v", worst, fastSp[worst], fastSp)
	}
	for _, r := range rows {
		f, _ := point.GridValue(r.Grid, point.FidelityKey)
		want := configs.FidelityFast
		if f == configs.FidelityInstruction {
			want = configs.FidelityInstruction
		}
		if r.Fidelity != want {
			t.Errorf("%s %s at grid %v: record fidelity %q, want %q", r.Layer, r.Mode, r.Grid, r.Fidelity, want)
		}
	}
	if !strings.Contains(out, "refined 2 of 3 points") || strings.Count(out, "  point ") != 2 ||
		!strings.Contains(out, " %)") {
		t.Errorf("the report does not say which points moved how much:\n%s", out)
	}
	for w, s := range instrSp {
		t.Logf("%s B/clk: fast %.4f, instruction %.4f", w, fastSp[w], s)
	}
	// The plot of the store labels the fast figure and draws each tier's
	// points as a line of its own.
	svg := filepath.Join(dir, "p.svg")
	if code := dispatch([]string{"plot", db, "--x", "tensorcore.fp16.b_operand_bytes_per_clk", "--out", svg}); code != exitOK {
		t.Fatalf("plot: exit %d", code)
	}
	data, _ := os.ReadFile(svg)
	for _, want := range []string{"(fast tier)", "tiny, sim.fidelity=fast", "tiny, sim.fidelity=instruction"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
}

// config show states the fast tier's measured error under
// sim.fidelity=fast (fast.ErrorStatement, the long tests' numbers), and
// nothing of it otherwise; a fast run's stderr says which tier timed it.
func TestFastTierIsStated(t *testing.T) {
	stated := fast.ErrorStatement()
	out, code := captureStdout(t, func() int { return dispatch([]string{"config", "show", "--set", "sim.fidelity=fast"}) })
	if code != exitOK || !strings.Contains(out, stated) || !strings.Contains(out, "TestAgreesWithInstructionTier") {
		t.Errorf("config show under fast: exit %d, no %q in\n%s", code, stated, out)
	}
	out, _ = captureStdout(t, func() int { return dispatch([]string{"config", "show"}) })
	if strings.Contains(out, stated) {
		t.Error("config show states the fast tier's error at instruction fidelity")
	}
	_, errOut, code := capture(t, func() int {
		return dispatch([]string{"run", "--gemm", "512x512x512", "--set", "sim.fidelity=fast",
			"--set", "gpu.sm_count=4", "--no-cache", "--format", "csv"})
	})
	if code != exitOK || !strings.Contains(errOut, "fidelity: 2 records on the fast tier") {
		t.Errorf("fast run: exit %d, stderr %q", code, errOut)
	}
}
