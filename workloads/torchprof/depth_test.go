package torchprof

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// nested is a profiler trace of depth calls nested in one another on one
// thread: aten::linear -> aten::matmul -> ... -> aten::mm [8 64] x [64 32]
// innermost, every outer call the same interval widened by one us on
// each side.
func nested(depth int) []byte {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	names := []string{"aten::linear", "aten::matmul", "aten::addmm"}
	for i := range depth {
		name := names[i%len(names)]
		args := `"Input Dims":[[8,64],[32,64],[32]]`
		if name == "aten::addmm" {
			args = `"Input Dims":[[32],[8,64],[64,32]]`
		}
		if i == depth-1 {
			name, args = "aten::mm", `"Input Dims":[[8,64],[64,32]]`
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":%q,"ph":"X","pid":1,"tid":1,"ts":%d,"dur":%d,"args":{%s}}`,
			name, i, 2*(depth-i), args)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// TestDeepNestingCountsTheInnermostCall: however deep the nesting, the
// innermost GEMM is the one call counted.
func TestDeepNestingCountsTheInnermostCall(t *testing.T) {
	for _, depth := range []int{1, 2, 3, 1000, 20000} {
		r, err := Import(nested(depth), "deep.json")
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if len(r.Layers) != 1 || r.Layers[0].Name != "mm_32x8x64.0" {
			t.Errorf("depth %d: layers %+v", depth, r.Layers)
		}
	}
}

// outer is the definition of nesting that classify implements: same
// thread, b's interval within a's, and for equal intervals the earlier
// event in the file outside.
func outer(a, b *event) bool {
	return a != b && a.thread == b.thread && a.start <= b.start && b.end <= a.end &&
		(a.start < b.start || a.end > b.end || a.index < b.index)
}

// TestNestingAgreesWithPairwiseContainment: on random forests of
// properly nested calls (ties included, in random file order, on two
// threads), the linear walk marks exactly the events the quadratic
// pairwise definition marks: a GEMM holding any GEMM, a convolution
// inside any convolution.
func TestNestingAgreesWithPairwiseContainment(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 1))
	names := []string{"aten::mm", "aten::matmul", "aten::linear", "aten::conv2d", "aten::convolution", "aten::_convolution"}
	for trial := range 300 {
		var events []*event
		// each event splits its interval among up to 3 children, with a
		// chance of sharing an end with its parent (profiler ties).
		var grow func(thread string, lo, hi float64, depth int)
		grow = func(thread string, lo, hi float64, depth int) {
			events = append(events, &event{Name: names[rng.IntN(len(names))], thread: thread, start: lo, end: hi})
			if depth == 0 || hi-lo < 1 {
				return
			}
			kids := rng.IntN(4)
			w := (hi - lo) / float64(max(kids, 1))
			for k := range kids {
				a, b := lo+float64(k)*w, lo+float64(k+1)*w
				if rng.IntN(3) > 0 {
					a += float64(rng.IntN(int(w/4) + 1))
				}
				if rng.IntN(3) > 0 {
					b -= float64(rng.IntN(int(w/4) + 1))
				}
				grow(thread, a, max(a, b), depth-1)
			}
		}
		grow("1/1", 0, 4096, 1+rng.IntN(10))
		grow("1/2", 0, 4096, 1+rng.IntN(10))
		rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
		var gemms, convs []*event
		for i, e := range events {
			e.index = i
			if isGEMM(e.Name) {
				gemms = append(gemms, e)
			} else {
				convs = append(convs, e)
			}
		}
		classify(gemms, convs)
		for _, e := range gemms {
			want := false
			for _, o := range gemms {
				want = want || outer(e, o)
			}
			if e.wrapper != want {
				t.Fatalf("trial %d: GEMM event %d [%v %v] wrapper %v, want %v", trial, e.index, e.start, e.end, e.wrapper, want)
			}
		}
		for _, e := range convs {
			want := false
			for _, o := range convs {
				want = want || outer(o, e)
			}
			if e.nested != want {
				t.Fatalf("trial %d: convolution event %d [%v %v] nested %v, want %v", trial, e.index, e.start, e.end, e.nested, want)
			}
		}
	}
}

// BenchmarkDeepNesting: 400k calls nested in one another (issue 51: 615
// s of CPU before the walk became linear; the goal is under 5 s).
//
//	go test ./workloads/torchprof -run '^$' -bench DeepNesting -benchtime 1x
func BenchmarkDeepNesting(b *testing.B) {
	data := nested(400000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Import(data, "deep.json"); err != nil {
			b.Fatal(err)
		}
	}
}
