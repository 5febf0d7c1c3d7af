package sweep

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/sweep/point"
	"github.com/stcsim/stcsim/workloads"
)

var models = Resolver{Model: workloads.Build}

func planWith(t *testing.T, spec string) (*Plan, error) {
	t.Helper()
	s, err := Parse([]byte(spec), filepath.Join(t.TempDir(), "sweep.yaml"))
	if err != nil {
		return nil, err
	}
	return s.Plan(models)
}

// TestWorkloadAxesBuildEachPointsModel: workload.batch in the grid builds
// the model at each batch (its N grows with it, as the built-in generator
// folds batch x seq into tokens), each with its own identity in the store,
// and layers: keeps only the matching rows.
func TestWorkloadAxesBuildEachPointsModel(t *testing.T) {
	p, err := planWith(t, `
workloads:
  - model: bert-base
    seq: 128
    layers: 'ffn1$'
grid:
  workload.batch: [1, 4]
  gpu.sm_count: [54, 108]
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 4 || len(p.Units()) != 4 {
		t.Fatalf("%d points, %d units; want 4 and 4", len(p.Points), len(p.Units()))
	}
	// The store keys results by (config, workload name): each batch's
	// workload has a name of its own, the config hash is shared.
	seen := map[string]bool{}
	for _, u := range p.Units() {
		key := u.Point.Hash + " " + u.Workload.Trace.Name
		if seen[key] {
			t.Errorf("point %s: unit %s repeats", u.Point.Label(), key)
		}
		seen[key] = true
	}
	for _, pt := range p.Points {
		ws := pt.Workloads()
		if len(ws) != 1 || len(ws[0].Trace.GEMMs) != 1 {
			t.Fatalf("point %s: workloads %v", pt.Label(), ws)
		}
		g := ws[0].Trace.GEMMs[0]
		batch, _ := point.GridValue(pt.Grid, "workload.batch")
		want := map[string]int{"1": 128, "4": 512}[batch]
		if ws[0].Trace.Name != "bert-base@batch="+batch {
			t.Errorf("point %s: workload named %s", pt.Label(), ws[0].Trace.Name)
		}
		if !strings.HasSuffix(g.Name, "ffn1") || g.N != want {
			t.Errorf("point %s: row %s N %d, want ffn1 with N %d", pt.Label(), g.Name, g.N, want)
		}
	}
	// The points at one batch share their workload; the two batches do not.
	u := p.Units()
	if u[0].Workload != u[1].Workload || u[0].Workload.Hash == u[2].Workload.Hash {
		t.Errorf("workloads per point: %v", u)
	}
}

// TestWorkloadAxesRefuseWhatChangesNothing: each wrong use of a workload
// option is an error naming the line and the key before anything runs.
func TestWorkloadAxesRefuseWhatChangesNothing(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"workloads: [{model: bert-base}]\ngrid: {workload.resolution: [112, 224]}\n",
			"no model workload of the sweep reads resolution"},
		{"workloads: [{model: bert-base, batch: 8}]\ngrid: {workload.batch: [1, 2]}\n",
			"workloads[0] sets batch, which grid key workload.batch (line 2) varies"},
		{"workloads: [{model: bert-base}]\ngrid: {workload.heads: [1, 2]}\n",
			"unknown workload option"},
		{"workloads: [{model: bert-base}]\ngrid: {workload.batch: [0, 2]}\n",
			"must be in [1,"},
		{"workloads: [{model: bert-base}]\nset: [workload.batch=2]\n",
			"workload.batch is a workload option"},
		{"workloads: [{model: bert-base, layers: '('}]\n", "layers: not a regular expression"},
		{"workloads: [{model: bert-base, layers: 'nosuch'}]\n", "layers \"nosuch\" matches none of the"},
		{"workloads: [{model: resnet50, seq: 64}]\n", "seq: model resnet50 does not read it"},
		{"workloads: [{gemms: [64x64x64], resolution: 64}]\n", "resolution applies to a model only"},
		{"workloads: [{gemms: [64x64x64]}]\ngrid: {workload.batch: [1, 2]}\n",
			"no model workload of the sweep reads batch"},
	} {
		_, err := planWith(t, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.spec, err, c.want)
		}
	}
}

// TestWorkloadBase: a plot's line follows a model across the points that
// vary its options; a name whose "@..." is not the point's options stays.
func TestWorkloadBase(t *testing.T) {
	grid := []point.Assignment{{Key: "workload.batch", Value: "4"}, {Key: "gpu.sm_count", Value: "54"}}
	for _, c := range []struct{ name, want string }{
		{"bert-base@batch=4", "bert-base"},
		{"bert-base@batch=8", "bert-base@batch=8"},
		{"bert-base@seq=4", "bert-base@seq=4"},
		{"my@trace", "my@trace"},
		{"plain", "plain"},
	} {
		if got := point.WorkloadBase(c.name, grid); got != c.want {
			t.Errorf("point.WorkloadBase(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
