package sweep

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/sweep/internal/sweeptest"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/workloads"
)

func mustPlan(t *testing.T, spec string) *Plan {
	t.Helper()
	s, err := Parse([]byte(spec), filepath.Join(t.TempDir(), "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runAll(t *testing.T, p *Plan, db string, opt Options) Summary {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if opt.Run == nil {
		opt.Run = sweeptest.FakeRun
	}
	sum, err := Run(context.Background(), p, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func export(t *testing.T, db string) []byte {
	t.Helper()
	st, err := store.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows()
	if err != nil {
		t.Fatal(err)
	}
	return store.ExportCSV(rows)
}

func TestPlanPoints(t *testing.T) {
	p := mustPlan(t, sweeptest.Spec)
	want := []string{
		"shared_memory.bytes_per_clk=64 l2.size_kb=20480 dram.bandwidth_gbps=1000",
		"shared_memory.bytes_per_clk=64 l2.size_kb=40960 dram.bandwidth_gbps=1555",
		"shared_memory.bytes_per_clk=128 l2.size_kb=20480 dram.bandwidth_gbps=1000",
		"shared_memory.bytes_per_clk=128 l2.size_kb=40960 dram.bandwidth_gbps=1555",
	}
	if len(p.Points) != len(want) {
		t.Fatalf("%d points, want %d", len(p.Points), len(want))
	}
	for i, pt := range p.Points {
		if pt.Label() != want[i] {
			t.Errorf("point %d: %s, want %s", i, pt.Label(), want[i])
		}
	}
	ld2, err := p.Points[2].Load()
	if err != nil {
		t.Fatal(err)
	}
	ld0, err := p.Points[0].Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := ld2.Config.Memory.SharedMemory.BytesPerClk; got != 128 {
		t.Errorf("point 3 bytes_per_clk %d, want 128", got)
	}
	if got := ld0.Config.Sim.Seed; got != 7 {
		t.Errorf("set sim.seed not applied: %d", got)
	}
	if len(p.Units()) != 8 {
		t.Errorf("%d units, want 8", len(p.Units()))
	}
}

func TestSpecErrors(t *testing.T) {
	base := "workloads: [{gemms: [64x64x64]}]\n"
	tests := []struct {
		name, spec, want string
	}{
		{"unknown spec key", base + "grdi: {}\n", `line 2: unknown key "grdi" (allowed here:`},
		{"unknown config key", base + "grid: {l2.size_kbb: [1]}\n",
			"unknown key l2.size_kbb"},
		{"bad value type", base + "grid: {gpu.sm_count: [many]}\n",
			"gpu.sm_count"},
		{"invalid value", base + "grid: {gpu.sm_count: [108, 0]}\n",
			"point 2 (gpu.sm_count=0)"},
		{"zip length", base + "zip: [{l2.size_kb: [1, 2], gpu.sm_count: [1]}]\n",
			"equal length"},
		{"key twice", base + "grid: {gpu.sm_count: [1]}\nzip: [{gpu.sm_count: [2]}]\n",
			"already varied"},
		{"same config", base + "grid: {gpu.sm_count: [108, 108]}\n",
			"same effective config"},
		{"bad mode", base + "modes: [sparse, fast]\n", `"fast"`},
		{"bad gemm", "workloads: [{gemms: [64x64]}]\n", "want MxNxK"},
		{"bad precision", "workloads: [{gemms: [64x64x64], precision: fp8}]\n", "fp8"},
		{"two kinds", "workloads: [{gemms: [64x64x64], model: bert}]\n",
			"exactly one of"},
		{"unknown workload key", "workloads: [{gemms: [64x64x64], batchh: 2}]\n",
			`unknown workload key "batchh"`},
		{"no workloads", "grid: {gpu.sm_count: [1]}\n", "at least one workload"},
		{"model unavailable", "workloads: [{model: resnet50, batch: 1}]\n",
			"not available"},
		{"empty values", base + "grid: {gpu.sm_count: []}\n", "non-empty list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.spec), "x.yaml")
			if err == nil {
				_, err = s.Plan(Resolver{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestResumeSkipsFinished(t *testing.T) {
	p := mustPlan(t, sweeptest.Spec)
	db := filepath.Join(t.TempDir(), "r.db")
	if s := runAll(t, p, db, Options{Jobs: 2}); s.Ran != 8 || s.Skipped != 0 {
		t.Fatalf("first run: %+v", s)
	}
	first := export(t, db)
	calls := 0
	count := func(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
		calls++
		return sweeptest.FakeRun(ld, job)
	}
	if s := runAll(t, p, db, Options{Jobs: 1, Run: count}); s.Ran != 0 || s.Skipped != 8 {
		t.Fatalf("second run: %+v", s)
	}
	if calls != 0 {
		t.Errorf("re-run simulated %d units", calls)
	}
	if !bytes.Equal(first, export(t, db)) {
		t.Error("re-run changed the store")
	}
	// 8 units x 3 GEMMs... small has 2 GEMMs, big 1: 4 points x 3 x 2 modes.
	if n := bytes.Count(first, []byte("\n")) - 1; n != 24 {
		t.Errorf("%d exported rows, want 24", n)
	}
}

// The store a run writes does not depend on how many jobs ran it or on
// which unit finished first: units finishing in reverse order under 4
// jobs leave the same file, byte for byte, as one job.
func TestStoreBytesDoNotDependOnJobs(t *testing.T) {
	p := mustPlan(t, sweeptest.Spec)
	dir := t.TempDir()
	var mu sync.Mutex
	var files [][]byte
	for _, jobs := range []int{1, 4} {
		calls := 0
		late := func(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if jobs > 1 {
				time.Sleep(time.Duration(12-n) * 3 * time.Millisecond) // the first started ends last
			}
			return sweeptest.FakeRun(ld, job)
		}
		db := filepath.Join(dir, fmt.Sprintf("j%d.db", jobs))
		if s := runAll(t, p, db, Options{Jobs: jobs, Run: late}); s.Ran != 8 {
			t.Fatalf("%d jobs: %+v", jobs, s)
		}
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the store written by 4 jobs differs from the one written by 1")
	}
}

func TestRunStopsOnError(t *testing.T) {
	p := mustPlan(t, sweeptest.Spec)
	db := filepath.Join(t.TempDir(), "e.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	failThird := func(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
		n++
		if n == 3 {
			return nil, fmt.Errorf("boom")
		}
		return sweeptest.FakeRun(ld, job)
	}
	sum, err := Run(context.Background(), p, st, Options{Jobs: 1, Run: failThird})
	if err == nil || !strings.Contains(err.Error(), "boom") ||
		!strings.Contains(err.Error(), "point 2") {
		t.Fatalf("error %v, want boom at point 2", err)
	}
	if sum.Ran != 2 {
		t.Errorf("ran %d before the failure, want 2", sum.Ran)
	}
	if err := st.Check(); err != nil {
		t.Error(err)
	}
}

func TestShardedMergedEqualsUnsharded(t *testing.T) {
	p := mustPlan(t, sweeptest.Spec)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.db")
	runAll(t, p, full, Options{Jobs: 2})
	for _, n := range []int{2, 3} {
		var shards []string
		total := 0
		for i := 1; i <= n; i++ {
			db := filepath.Join(dir, fmt.Sprintf("s%d-%d.db", n, i))
			s := runAll(t, p, db, Options{Jobs: 1, Shard: Shard{I: i, N: n}})
			total += s.Ran
			shards = append(shards, db)
		}
		if total != 8 {
			t.Errorf("%d shards ran %d units, want 8", n, total)
		}
		out := filepath.Join(dir, fmt.Sprintf("merged%d.db", n))
		st, err := store.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		// Merging a shard twice must not duplicate anything.
		if err := st.Merge(append(shards, shards[0])...); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if a, b := export(t, full), export(t, out); !bytes.Equal(a, b) {
			t.Errorf("%d shards merged differ from unsharded:\n%s\nvs\n%s", n, b, a)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0", ""} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if s, err := ParseShard("2/3"); err != nil || s != (Shard{2, 3}) {
		t.Errorf("2/3: %v %v", s, err)
	}
}

// The interruption tests run real sweeps in child processes (this test
// binary re-executed) so that kill -9 hits a process mid-write.

const childEnv = "STCSIM_SWEEP_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childSweep(spec, os.Getenv("STCSIM_SWEEP_DB")))
	}
	os.Exit(m.Run())
}

func childSweep(specPath, db string) int {
	s, err := Load(specPath)
	if err == nil {
		var p *Plan
		if p, err = s.Plan(Resolver{}); err == nil {
			var st *store.Store
			if st, err = store.Open(db); err == nil {
				_, err = Run(context.Background(), p, st,
					Options{Jobs: 2, Run: sweeptest.FakeRun})
				if cerr := st.Close(); err == nil {
					err = cerr
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startChild(t *testing.T, spec, db string, delayMS int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+spec, "STCSIM_SWEEP_DB="+db,
		"STCSIM_FAKE_DELAY_MS="+strconv.Itoa(delayMS))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// pointsIn counts the points committed to the store at db, creating the
// store the first time. It reads with a connection of its own, closed
// as the store's own connections are but without Store.Close's
// checkpoint, which would wait for the writer being killed.
func pointsIn(t *testing.T, db string) int {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := sql.Open("sqlite3", "file:"+db+"?_busy_timeout=60000")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM points`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func writeSpec(t *testing.T) (string, *Plan) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(path, []byte(sweeptest.Spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	return path, p
}

func TestKill9Resumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	spec, p := writeSpec(t)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.db")
	runAll(t, p, ref, Options{Jobs: 2})
	db := filepath.Join(dir, "killed.db")
	// Kill after the first commits of each round, at varying offsets from
	// the last commit so that some kills land mid-transaction.
	for round, extra := range []time.Duration{0, 7 * time.Millisecond,
		25 * time.Millisecond} {
		before := pointsIn(t, db)
		child := startChild(t, spec, db, 150)
		deadline := time.Now().Add(10 * time.Second)
		for pointsIn(t, db) == before && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(extra)
		if err := child.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = child.Wait()
		after := pointsIn(t, db)
		t.Logf("round %d: %d -> %d points committed before kill -9",
			round, before, after)
		if after <= before {
			t.Fatalf("round %d: no progress or lost points: %d -> %d",
				round, before, after)
		}
	}
	if n := pointsIn(t, db); n == 8 {
		t.Fatal("children finished before being killed; the test proves nothing")
	}
	s := runAll(t, p, db, Options{Jobs: 2})
	if s.Ran+s.Skipped != 8 || s.Skipped == 0 {
		t.Errorf("resume: %+v", s)
	}
	if a, b := export(t, ref), export(t, db); !bytes.Equal(a, b) {
		t.Errorf("killed and resumed differs from uninterrupted:\n%s\nvs\n%s", b, a)
	}
}

func TestTwoWritersOneStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	spec, p := writeSpec(t)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.db")
	runAll(t, p, ref, Options{Jobs: 2})
	db := filepath.Join(dir, "shared.db")
	a := startChild(t, spec, db, 10)
	b := startChild(t, spec, db, 10)
	if err := a.Wait(); err != nil {
		t.Errorf("writer 1: %v", err)
	}
	if err := b.Wait(); err != nil {
		t.Errorf("writer 2: %v", err)
	}
	if x, y := export(t, ref), export(t, db); !bytes.Equal(x, y) {
		t.Errorf("two writers' store differs from one writer's:\n%s\nvs\n%s", y, x)
	}
}

// TestRealSimulator runs a small sweep through sim.Run (no fake) and checks
// that what the store holds is what the simulator reported.
func TestRealSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	p := mustPlan(t, `
workloads: [{name: tiny, gemms: [256x256x256]}]
grid: {gpu.sm_count: [54, 108]}
`)
	db := filepath.Join(t.TempDir(), "real.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Run(context.Background(), p, st, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 2 points x 2 modes", len(rows))
	}
	ld1, err := p.Points[1].Load()
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.Run(ld1, sim.Job{
		Workloads: []*workloads.Trace{p.Workloads[0].Trace}, Modes: p.Modes})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want.Results {
		found := false
		for _, r := range rows {
			if r.ConfigHash == p.Points[1].Hash && r.Mode == w.Mode {
				found = true
				if !reflect.DeepEqual(r.LayerResult, w) {
					t.Errorf("stored %+v, simulator says %+v", r.LayerResult, w)
				}
			}
		}
		if !found {
			t.Errorf("no stored row for mode %s", w.Mode)
		}
	}
}

// BenchmarkCommit measures committing one unit (a 3-GEMM workload in two
// modes: 6 result rows) in its own transaction.
func BenchmarkCommit(b *testing.B) {
	s, err := Parse([]byte(sweeptest.Spec), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.Plan(Resolver{})
	if err != nil {
		b.Fatal(err)
	}
	u := p.Units()[0]
	st, err := store.Open(filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ld, _ := u.Point.Load()
	rep, _ := sweeptest.FakeRun(ld, sim.Job{
		Workloads: []*workloads.Trace{u.Workload.Trace}, Modes: p.Modes})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := u.ID()
		id.Point.Hash = fmt.Sprintf("%016x", i)
		if _, err := st.Commit(id, p.Modes, nil, rep); err != nil {
			b.Fatal(err)
		}
	}
}
