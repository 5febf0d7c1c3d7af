package torchprof

import (
	"os"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func TestBadInput(t *testing.T) {
	cases := []struct {
		name, data string
		want       []string
	}{
		{"not JSON", "name,m,n,k\n", []string{"p.json", "not a PyTorch profiler trace"}},
		{"a stcsim trace", `{"name":"x","gemms":[]}`, []string{"p.json", `without "traceEvents"`}},
		{"truncated", `{"traceEvents":[{"name":"aten::mm","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[2,3],[3`,
			[]string{"p.json", "not a PyTorch profiler trace"}},
		{"no shapes (legacy export)", `[{"name":"aten::mm","ph":"X","ts":1,"dur":2,"tid":1,"pid":"CPU functions","args":{}}]`,
			[]string{"p.json", "record_shapes=True"}},
		{"no GEMM", `{"traceEvents":[{"name":"aten::relu","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[2,3]]}}]}`,
			[]string{"p.json", "nothing to simulate"}},
		{"huge dims", `{"traceEvents":[{"name":"aten::mm","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[1099511627776,3],[3,4]]}}]}`,
			[]string{"p.json", "event 0", `"aten::mm"`, "outside"}},
		{"operands that do not multiply", `{"traceEvents":[{"name":"aten::mm","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[2,3],[4,5]]}}]}`,
			[]string{"p.json", "event 0", "do not multiply"}},
		{"bad ts", `{"traceEvents":[{"name":"aten::mm","ph":"X","ts":"x","dur":2,"args":{"Input Dims":[[2,3],[3,5]]}}]}`,
			[]string{"p.json", "not a PyTorch profiler trace"}},
		{"only convolutions without stride", `{"traceEvents":[{"name":"aten::conv2d","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[4,16,8,8],[32,16,3,3],[32],[],[],[],[]]}}]}`,
			[]string{"p.json", "no GEMM could be imported", "aten::conv2d", "ONNX"}},
		{"long name", `{"traceEvents":[{"name":"aten::mm` + strings.Repeat("x", 100000) + `","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[2,3],[3,5]]}}]}`,
			[]string{"p.json", "nothing to simulate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import([]byte(c.data), "p.json")
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(err.Error()) > 600 {
				t.Errorf("a %d-byte message", len(err.Error()))
			}
		})
	}
}

// TestNestingCountsTheGEMMThatRuns: linear -> matmul -> mm counts once, at
// mm; a matmul with nothing recorded under it counts itself; calls of one
// shape merge into a count.
func TestNestingCountsTheGEMMThatRuns(t *testing.T) {
	data := `{"traceEvents":[
 {"name":"aten::linear","ph":"X","pid":1,"tid":1,"ts":0,"dur":100,"args":{"Input Dims":[[4,8,64],[32,64],[32]]}},
 {"name":"aten::matmul","ph":"X","pid":1,"tid":1,"ts":1,"dur":98,"args":{"Input Dims":[[4,8,64],[64,32]]}},
 {"name":"aten::mm","ph":"X","pid":1,"tid":1,"ts":2,"dur":90,"args":{"Input Dims":[[32,64],[64,32]]}},
 {"name":"aten::mm","ph":"X","pid":1,"tid":2,"ts":50,"dur":10,"args":{"Input Dims":[[32,64],[64,32]]}},
 {"name":"aten::matmul","ph":"X","pid":1,"tid":1,"ts":200,"dur":10,"args":{"Input Dims":[[2,12,16,64],[2,12,64,16]]}},
 {"name":"cudaLaunchKernel","ph":"X","pid":1,"tid":1,"ts":3,"dur":1,"args":{}}
]}`
	r, err := Import([]byte(data), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	rows := workloads.Rows(r.Layers, tensorcore.FP16, false)
	got := shapes(rows)
	want := []shape{{32, 32, 64, 1, 2, "2:4"}, {16, 16, 64, 24, 1, "dense"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// TestConcreteInputsGiveTheConvolution: with stride and padding recorded
// (torch 2.x "Concrete Inputs"), a convolution is the implicit GEMM of
// the built-in ResNet stem.
func TestConcreteInputsGiveTheConvolution(t *testing.T) {
	data := `{"traceEvents":[
 {"name":"aten::conv2d","ph":"X","pid":1,"tid":1,"ts":0,"dur":100,"args":{"Input Dims":[[32,3,224,224],[64,3,7,7],[],[],[],[],[]],
  "Concrete Inputs":["","","","[2, 2]","[3, 3]","[1, 1]","1"]}},
 {"name":"aten::convolution","ph":"X","pid":1,"tid":1,"ts":1,"dur":98,"args":{"Input Dims":[[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]}}
]}`
	r, err := Import([]byte(data), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := workloads.Build("resnet50", workloads.Options{Batch: 32})
	if err != nil {
		t.Fatal(err)
	}
	rows := workloads.Rows(r.Layers, tensorcore.FP16, false)
	if got := shapes(rows); len(got) != 1 || got[0] != shapes(want.GEMMs[:1])[0] {
		t.Errorf("rows %v, want the stem %v", got, shapes(want.GEMMs[:1]))
	}
}

func TestTinyProfileNamesTheSkippedConvolution(t *testing.T) {
	r := load(t, "tiny-profile.json")
	if len(r.Layers) != 2 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0], "aten::conv2d (input [4 16 4 4], weight [32 16 3 3])") ||
		!strings.Contains(r.Skipped[0], "ONNX") {
		t.Errorf("layers %+v, skipped %q", r.Layers, r.Skipped)
	}
}

func TestIsProfile(t *testing.T) {
	trace, err := os.ReadFile("../testdata/encoder-profile.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data string
		want bool
	}{{string(trace), true}, {`[{"name":"x"}]`, true}, {`{"name":"r","gemms":[]}`, false},
		{`{"name":"r","traceEvents":[]}`, true}, {"", false}, {"{", false}} {
		if got := IsProfile([]byte(c.data)); got != c.want {
			t.Errorf("IsProfile(%.40q) = %v", c.data, got)
		}
	}
}

// FuzzImport: no input panics, every error names the file within 400
// bytes with no raw control character, accepted layers are in bounds.
//
//	go test ./workloads/torchprof -run '^$' -fuzz '^FuzzImport$' -fuzztime 20000x -parallel 1
func FuzzImport(f *testing.F) {
	f.Add(`{"traceEvents":[{"name":"aten::mm","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[2,3],[3,5]]}}]}`)
	f.Add(`{"traceEvents":[{"name":"aten::bmm","ph":"X","ts":1,"dur":2,"args":{"Input Dims":[[4,2,3],[4,3,5]]}},{"name":"aten::matmul","ph":"X","ts":0,"dur":9,"args":{"Input Dims":[[4,2,3],[4,3,5]]}}]}`)
	f.Add(`{"traceEvents":[{"name":"aten::conv2d","ph":"X","ts":0,"dur":1,"args":{"Input Dims":[[1,3,8,8],[4,3,3,3]],"Concrete Inputs":["","","","[1, 1]","[1, 1]","[1, 1]","1"]}}]}`)
	if b, err := os.ReadFile("../testdata/tiny-profile.json"); err == nil {
		f.Add(string(b))
	}
	f.Add(`[]`)
	f.Add(string(nested(40))) // issue 51: nesting was quadratic in depth
	f.Fuzz(func(t *testing.T, data string) {
		r, err := Import([]byte(data), "f.json")
		if err != nil {
			msg := err.Error()
			if len(msg) > 400 || !strings.HasPrefix(msg, "f.json: ") || strings.ContainsAny(msg, "\x1b\x07") {
				t.Fatalf("a %d-byte message: %.300q", len(msg), msg)
			}
			return
		}
		for _, l := range r.Layers {
			if l.M < 1 || l.N < 1 || l.K < 1 || l.Batch < 1 || l.M > workloads.MaxDim ||
				l.N > workloads.MaxDim || l.K > workloads.MaxDim || l.Batch > workloads.MaxDim {
				t.Fatalf("layer %+v out of bounds", l)
			}
		}
	})
}
