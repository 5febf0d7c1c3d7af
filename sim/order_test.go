package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// The workers take the costliest shape first (by the front door's work
// estimate, which ranks nothing again), so
// that on two cores a large GEMM listed last does not run alone at the
// end; shapes of equal cost keep the job's order.
func TestLongestShapeFirst(t *testing.T) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	var shapes []kernel.Shape
	tr := &workloads.Trace{Name: "order"}
	for _, g := range []workloads.GEMM{
		{Name: "small", M: 256, N: 256, K: 256, Precision: tensorcore.FP16, Sparsity: "2:4"},
		{Name: "large", M: 4096, N: 2048, K: 4096, Precision: tensorcore.FP16, Sparsity: "2:4"},
		{Name: "small again", M: 256, N: 256, K: 256, Precision: tensorcore.FP16, Sparsity: "2:4"},
		{Name: "medium", M: 1024, N: 1024, K: 1024, Precision: tensorcore.FP16, Sparsity: "2:4"},
	} {
		s, err := shapeOf(cfg, g, tensorcore.Dense)
		if err != nil {
			t.Fatal(err)
		}
		shapes = append(shapes, s)
		g.Count, g.Batch = 1, 1
		tr.GEMMs = append(tr.GEMMs, g)
	}
	p, err := Prepare(cfg, Job{Workloads: []*workloads.Trace{tr}, Modes: []tensorcore.Mode{tensorcore.Dense}})
	if err != nil {
		t.Fatal(err)
	}
	got := newRunner(ld, p).longestFirst(shapes)
	want := []int{1, 3, 0, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v (large, medium, then the two small in the job's order)", got, want)
		}
	}
}
